/* What a UCX endpoint's traffic goes over, for reports (tl.h ep_describe). */
#include "transport/ucx_lanes.h"

#include <stdio.h>
#include <string.h>

/* UCX tells its lanes only in ucp_ep_print_info's text ("lane[0]:  2:tcp/eth0.0
 * md[1] ..."; UCX 1.13 has no query for them): the "transport/device" of
 * each lane, once each. */
fs_status_t fs_ucx_lanes(ucp_ep_h ep, char *buf, size_t len)
{
    char line[256], name[96], *dot;
    FILE *f = tmpfile();
    size_t used = 0;

    buf[0] = '\0';
    if ((f == NULL) || (ep == NULL)) {
        goto out;
    }
    ucp_ep_print_info(ep, f);
    rewind(f);
    while (fgets(line, sizeof(line), f) != NULL) {
        const char *lane = strstr(line, "lane[");
        if ((lane == NULL) || (sscanf(lane, "lane[%*d]: %*d:%95s", name) != 1)) {
            continue;
        }
        dot = strrchr(name, '.');           /* ".0": UCX's path index */
        if ((dot != NULL) && (strspn(dot + 1, "0123456789") == strlen(dot + 1))) {
            *dot = '\0';
        }
        if ((strstr(buf, name) != NULL) || (used + strlen(name) + 2 > len)) {
            continue;
        }
        used += (size_t)snprintf(buf + used, len - used, "%s%s", (used > 0) ? "," : "", name);
    }
out:
    if (f != NULL) {
        fclose(f);
    }
    return (buf[0] != '\0') ? FS_OK : FS_ERR_UNSUPPORTED;
}

