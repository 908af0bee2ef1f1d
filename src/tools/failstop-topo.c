/* failstop-topo: this host's topology for failstop-validate's report, read
 * with hwloc.  Tab-separated lines on stdout:
 *   host     NAME
 *   count    package|numa|core|pu N
 *   device   NAME KIND [PCI-ADDRESS] [NUMA-NODE]   (network and fabric devices)
 * KIND is hwloc's OS device type: network (an Ethernet or IPoIB interface),
 * openfabrics (a verbs device: InfiniBand, RoCE, EFA), other (Slingshot's
 * cxi and the like, when hwloc names them). */
#include <hwloc.h>
#include <stdio.h>
#include <unistd.h>

static const char *topo_kind(hwloc_obj_osdev_type_t type)
{
    switch (type) {
    case HWLOC_OBJ_OSDEV_NETWORK:     return "network";
    case HWLOC_OBJ_OSDEV_OPENFABRICS: return "openfabrics";
    default:                          return "other";
    }
}

/* The PCI address and NUMA node above an OS device, if any. */
static void topo_device(hwloc_topology_t topo, hwloc_obj_t dev)
{
    hwloc_obj_t up, near = hwloc_get_non_io_ancestor_obj(topo, dev);
    char pci[32] = "-";
    int numa = ((near != NULL) && (near->nodeset != NULL)) ? hwloc_bitmap_first(near->nodeset) : -1;

    for (up = dev->parent; up != NULL; up = up->parent) {
        if (up->type == HWLOC_OBJ_PCI_DEVICE) {
            snprintf(pci, sizeof(pci), "%04x:%02x:%02x.%01x", up->attr->pcidev.domain,
                     up->attr->pcidev.bus, up->attr->pcidev.dev, up->attr->pcidev.func);
            break;
        }
    }
    printf("device\t%s\t%s\t%s\t%d\n", dev->name, topo_kind(dev->attr->osdev.type), pci, numa);
}

int main(void)
{
    static const struct { hwloc_obj_type_t type; const char *name; } counts[] = {
        { HWLOC_OBJ_PACKAGE, "package" }, { HWLOC_OBJ_NUMANODE, "numa" },
        { HWLOC_OBJ_CORE, "core" }, { HWLOC_OBJ_PU, "pu" },
    };
    hwloc_topology_t topo;
    hwloc_obj_t dev = NULL;
    char host[256] = "?";
    size_t i;

    if ((hwloc_topology_init(&topo) != 0) ||
        (hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0) ||
        (hwloc_topology_load(topo) != 0)) {
        fprintf(stderr, "failstop-topo: hwloc cannot read this host's topology\n");
        return 1;
    }
    gethostname(host, sizeof(host) - 1);
    printf("host\t%s\n", host);
    for (i = 0; i < sizeof(counts) / sizeof(counts[0]); ++i) {
        printf("count\t%s\t%d\n", counts[i].name, hwloc_get_nbobjs_by_type(topo, counts[i].type));
    }
    while ((dev = hwloc_get_next_osdev(topo, dev)) != NULL) {
        if ((dev->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK) ||
            (dev->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS) ||
            (dev->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC)) {
            topo_device(topo, dev);
        }
    }
    hwloc_topology_destroy(topo);
    return 0;
}
