/* failstop: fault-tolerant point-to-point messaging for Open MPI.
 *
 * Public extension API for applications.  Link with -lfailstop
 * (pkg-config failstop).  Every function returns an MPI error code; when the
 * failstop PML is not the one in use they return MPI_ERR_UNSUPPORTED_OPERATION
 * and never the failure class, as the MPI fault-tolerance chapter asks
 * (17.1). */
#ifndef FAILSTOP_H
#define FAILSTOP_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FAILSTOP_VERSION_MAJOR 0
#define FAILSTOP_VERSION_MINOR 1

/* The error class MPI_ERR_RANK_FAIL_STOP (MPI-FT draft 17.5.1): a process in
 * the operation has failed.  Open MPI creates it at run time, so these are
 * expressions, valid after MPI_Init; compare with MPI_Error_class(code).
 * MPIX_ERR_PROC_FAILED is the later ULFM name of the same class.  Without
 * failstop the value is -1, which no MPI error class equals. */
int MPIX_Failstop_error_class(void);
#define MPIX_ERR_RANK_FAIL_STOP (MPIX_Failstop_error_class())
#define MPIX_ERR_PROC_FAILED    (MPIX_Failstop_error_class())

/* The error class (and code) of every operation on a revoked communicator
 * (ULFM).  Without failstop the value is -2. */
int MPIX_Failstop_revoked_class(void);
#define MPIX_ERR_REVOKED        (MPIX_Failstop_revoked_class())

/* The error class (and code) MPI_Wait/MPI_Test report for a nonblocking
 * MPI_ANY_SOURCE receive while a failure keeps MPI_ANY_SOURCE disabled, with
 * pml_failstop_anysource_pending=1 (ULFM's rule): the receive stays pending;
 * after MPIX_Comm_failure_ack a wait on it waits for its message.  With the
 * default (the chapter's rule) such a receive completes with
 * MPIX_ERR_PROC_FAILED instead.  Without failstop the value is -3. */
int MPIX_Failstop_pending_class(void);
#define MPIX_ERR_PROC_FAILED_PENDING (MPIX_Failstop_pending_class())

/* ULFM's attribute key: MPI_Comm_get_attr(MPI_COMM_WORLD, MPIX_FT, &v, &flag)
 * gives flag 1 and *v == 1 (failures are tolerated) under failstop; the key
 * is MPI_KEYVAL_INVALID without it. */
int MPIX_Failstop_ft_keyval(void);
#define MPIX_FT (MPIX_Failstop_ft_keyval())

/* ---- MPI-FT draft chapter 17 (run-through stabilization) ---------------- */

/* The group of processes of comm's (local) group known to have failed, at
 * this moment; ranks in comm's numbering (17.4.1).  Local. */
int MPIX_Comm_group_failed(MPI_Comm comm, MPI_Group *failed);

/* Same for the remote group of an intercommunicator (MPI_ERR_COMM for an
 * intracommunicator). */
int MPIX_Comm_remote_group_failed(MPI_Comm comm, MPI_Group *failed);

/* A failure of a process in comm disables MPI_ANY_SOURCE receives and probes
 * on comm (17.6); this re-enables them and returns the processes known
 * failed now (for an intercommunicator: of the remote group, where wildcard
 * receives come from).  A later new failure disables them again.
 * Thread-safe.  failed may be NULL. */
int MPIX_Comm_reenable_any_source(MPI_Comm comm, MPI_Group *failed);

/* *active = 0 once a process of comm failed that the last validation did
 * not recognize: every collective on comm then ends with
 * MPIX_ERR_RANK_FAIL_STOP (17.7, 17.8.2) until the next validation. */
int MPIX_Comm_collectives_enabled(MPI_Comm comm, int *active);

/* Validation (17.7.4): *failed = the group of comm's failed processes the
 * members agree on (ranks in comm's numbering), the same group at every
 * caller or an error at every caller, also when members die during it; those
 * failures are then recognized and comm's collectives are on again: they run
 * over the alive processes, skip the recognized failed ones (their segments
 * of gather-type receive buffers are left untouched; a recognized failed
 * root gives MPI_ERR_RANK) until a newer failure turns them off.
 * Collective over comm's alive processes; no collective may overlap it.
 * MPIX_ERR_REVOKED on a revoked comm (at every caller).  Intracommunicators
 * (intercommunicators: MPI_ERR_UNSUPPORTED_OPERATION for now). */
int MPIX_Comm_validate(MPI_Comm comm, MPI_Group *failed);

/* The same, nonblocking: *failed is set when *request completes. */
int MPIX_Icomm_validate(MPI_Comm comm, MPI_Group *failed, MPI_Request *request);

/* ---- ULFM spellings of the same operations ------------------------------ */

/* = MPIX_Comm_reenable_any_source(comm, NULL) */
int MPIX_Comm_failure_ack(MPI_Comm comm);

/* The failed group as of the last MPIX_Comm_failure_ack or
 * MPIX_Comm_reenable_any_source on comm. */
int MPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failed);

/* ---- ULFM recovery ---------------------------------------------------------- */

/* Fault-tolerant agreement over comm's members that have not failed:
 * *flag becomes the bitwise AND of the flags of every member that took part
 * (at least every member that did not fail), the same value at every
 * member, also when members, whoever coordinates included, die during it.
 * Returns MPIX_ERR_PROC_FAILED, with the value agreed all the same, when a
 * failed member is not acknowledged (MPIX_Comm_failure_ack) by every member:
 * the same return at every member.  Collective; works on communicators
 * whose collectives are off after a failure.  Intracommunicators
 * (intercommunicators: MPI_ERR_UNSUPPORTED_OPERATION for now). */
int MPIX_Comm_agree(MPI_Comm comm, int *flag);

/* The same, nonblocking: *flag and the return of the completion (MPI_Wait,
 * MPI_Test) are the agreement's once *request completes. */
int MPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request);

/* Revokes comm at every live member, reliably (members that forward the
 * news may die): from then on every pending and new operation on comm,
 * point-to-point or collective, ends with MPIX_ERR_REVOKED, except
 * MPIX_Comm_agree/iagree, MPIX_Comm_failure_ack/get_acked and MPI_Comm_free.
 * Not collective; local completion.  Intracommunicators. */
int MPIX_Comm_revoke(MPI_Comm comm);

/* *flag = 1 once comm is revoked here (by this process or news of another's). */
int MPIX_Comm_is_revoked(MPI_Comm comm, int *flag);

/* *newcomm = a new communicator of comm's members outside the failed set
 * the members agree on (one agreement), in comm's rank order, the same at
 * all of them, also when members die during it (one that dies after the
 * agreement is a failed member of *newcomm).  Works on revoked
 * communicators and on ones whose collectives are off.  Collective;
 * intracommunicators. */
int MPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm);

/* The same, nonblocking: *newcomm is set when *request completes. */
int MPIX_Comm_ishrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request);

/* ---- failstop itself ----------------------------------------------------- */

/* *flag = 1 if this process communicates through the failstop PML (valid
 * after MPI_Init). */
int MPIX_Failstop_active(int *flag);

/* Reads one of failstop's counters by name: "msgs_sent", "msgs_received",
 * "unexpected", "reordered", "early_cid", "discarded_after_failure",
 * "dropped_malformed", "agree_stale" (agreement and revoke messages of a
 * freed communicator, dropped), "lost_no_memory" (messages not kept: out of memory
 * or past pml_failstop_max_unexpected_mb), "pool_grows", "large_copies", "peers_failed",
 * "peers_left", "notices_sent", "notices_received", "requests_allocated",
 * and the failure detector's "hb_beats_sent", "hb_beats_received",
 * "hb_suspicions" (failures it decided itself), "hb_failed_sent" (failure
 * messages it sent: the propagation cost), "hb_syncs_sent", "hb_refused"
 * (messages of processes known failed), "hb_host_checks" (silent processes
 * of other hosts whose host it probed), "hb_asks" (processes of other hosts
 * whose host-mates it asked, a link to them having broken), "hb_extensions"
 * (silent processes of this host it gave one timeout more, seeing them
 * running), "hb_max_beat_gap_us" (largest gap
 * between two heartbeats of the process this one watches) and
 * "hb_max_self_late_us" (largest lateness of the detector's own timer); all
 * 0 when the detector is off.
 * Unknown names give MPI_ERR_ARG.
 * pool_grows counts the allocations failstop made for messages and
 * requests_allocated the MPI request objects it created: both stay flat once
 * a communication pattern has warmed up. */
int MPIX_Failstop_counter(const char *name, unsigned long long *value);

#ifdef __cplusplus
}
#endif

#endif
