/* The agreement protocol (src/failure/agree.c) under the simulator of
 * agree_sim.h: exact failure-free cost, failures before the start, the
 * acknowledgement rule, the coordinator killed at every step (including
 * ERA's hole: it decides, tells one child, and both die), cascades,
 * interior nodes, zombies, late entrants, many and overlapping instances,
 * and a randomised property run.  Every run is checked for uniform
 * agreement, termination and validity (as_check).
 * tests/failure/agree_mutate.sh lists mutations of agree.c each of which
 * turns some of these red. */
#include "agree_sim.h"

/* depth of a binomial tree of n nodes: the most bits set in a position */
static uint32_t binomial_depth(uint32_t n)
{
    uint32_t d = 0, i;

    for (i = 0; i < n; i++)
        d = (uint32_t)__builtin_popcount(i) > d ? (uint32_t)__builtin_popcount(i) : d;
    return d;
}

static uint32_t ceil_log2(uint32_t n)
{
    uint32_t d = 0;

    while ((1u << d) < n)
        d++;
    return d;
}

static double last_decision(const as_sim_t *s, uint32_t k)
{
    double t = 0;
    uint32_t r;

    for (r = 0; r < s->n; r++) {
        if (s->p[r].dec[k].decided && (s->p[r].dec[k].at > t))
            t = s->p[r].dec[k].at;
    }
    return t;
}

/* 1. Failure-free: 4(n-1) messages, 4 x depth message delays. */
Test(agree_sim, failure_free_costs_four_waves_exactly)
{
    uint32_t n;
    int star;

    for (star = 0; star <= 1; star++) {
        for (n = 1; n <= AS_MAX; n++) {
            as_sim_t *s = malloc(sizeof(*s));
            uint32_t depth = star ? (n > 1) : binomial_depth(n);
            char ctx[64];

            as_init(s, n, star, n);
            as_start_all(s, 0);
            as_run(s, AS_NEVER);
            snprintf(ctx, sizeof ctx, "n %u star %d", n, star);
            as_check(s, ctx);
            cr_assert_eq(as_sent(s, FS_AGREE_UP), 2 * (n - 1), "%s: UP", ctx);
            cr_assert_eq(as_sent(s, FS_AGREE_PROPOSE), n - 1, "%s: PROPOSE", ctx);
            cr_assert_eq(as_sent(s, FS_AGREE_DECIDE), n - 1, "%s: DECIDE", ctx);
            cr_assert_eq(last_decision(s, 0), 4.0 * depth, "%s: latency", ctx);
            cr_assert_eq(s->p[0].dec[0].fd, 0);
            cr_assert_eq(s->p[0].dec[0].unacked, 0);
            as_fini(s);
            free(s);
        }
    }
}

/* 2. Failures before the start, known to all or to one process only. */
Test(agree_sim, failures_before_start_are_in_the_decision)
{
    as_sim_t *s = malloc(sizeof(*s));

    as_init(s, 12, 0, 1);
    s->learn_min = s->learn_max = 0;
    as_kill(s, 0, 0);
    as_kill(s, 5, 0);
    as_start_all(s, 0);
    as_run(s, AS_NEVER);
    as_check(s, "known to all");
    cr_assert_eq(s->p[1].dec[0].fd, (1ull << 0) | (1ull << 5));
    as_fini(s);

    /* only process 7 knows at the start; the others learn much later */
    as_init(s, 12, 0, 2);
    s->learn_min = s->learn_max = 500;
    as_kill(s, 3, 0);
    s->p[7].known = 1ull << 3;
    cr_assert_eq(fs_agree_gone(s->p[7].a, 3, 1), FS_OK);
    as_start_all(s, 0);
    as_run(s, AS_NEVER);
    as_check(s, "known to one");
    cr_assert_eq(s->p[1].dec[0].fd, 1ull << 3);
    as_fini(s);
    free(s);
}

/* 3. PROC_FAILED (unacked) iff some contributor has not acknowledged a
 *    member of F_D: uniform, whatever each process acknowledged. */
Test(agree_sim, the_acknowledgement_rule_is_uniform)
{
    as_sim_t *s = malloc(sizeof(*s));
    uint32_t r;
    int c;

    for (c = 0; c < 3; c++) {
        as_init(s, 9, 0, 3 + c);
        s->learn_min = s->learn_max = 0;
        as_kill(s, 4, 0);
        for (r = 0; r < s->n; r++)
            s->p[r].ack_mask = (c == 0) ? ~0ull : (c == 1) ? 0 : ((r == 6) ? 0 : ~0ull);
        as_start_all(s, 0);
        as_run(s, AS_NEVER);
        as_check(s, "acked");
        for (r = 0; r < s->n; r++) {
            if (r != 4)
                cr_assert_eq(s->p[r].dec[0].unacked, c != 0, "case %d rank %u", c, r);
        }
        as_fini(s);
    }
    free(s);
}

/* Runs n = 8 with the given traps, over several seeds with jitter. */
static void run_traps(const as_trap_t *traps, uint32_t ntrap, const char *ctx)
{
    as_sim_t *s = malloc(sizeof(*s));
    uint64_t seed;
    char name[96];

    for (seed = getenv("FS_AGREE_SEED") ? strtoull(getenv("FS_AGREE_SEED"), NULL, 10) : 1;
         seed <= 40; seed++) {
        as_init(s, 8, seed % 4 == 0, seed);
        s->jitter = (seed % 3) * 0.7;
        s->learn_min = 1;
        s->learn_max = 1 + (double)(seed % 5) * 3;
        memcpy(s->trap, traps, ntrap * sizeof(*traps));
        s->ntrap = ntrap;
        as_start_all(s, (seed % 2) ? 2.0 : 0);
        as_run(s, AS_NEVER);
        snprintf(name, sizeof name, "%s, seed %llu", ctx, (unsigned long long)seed);
        as_check(s, name);
        as_fini(s);
    }
    free(s);
}

/* 4. The coordinator (0) dies at each step of its instance. */
Test(agree_sim, coordinator_dies_at_each_step)
{
    as_trap_t t[2] = { { 0 } };

    t[0] = (as_trap_t){ .who = 0, .type = FS_AGREE_PROPOSE, .nth = 1 };
    run_traps(t, 1, "after a complete gather");
    t[0] = (as_trap_t){ .who = 0, .type = FS_AGREE_PROPOSE, .nth = 2 };
    run_traps(t, 1, "after PROPOSE reached a subset");
    t[0] = (as_trap_t){ .who = 0, .type = FS_AGREE_DECIDE, .nth = 1 };
    run_traps(t, 1, "after commit, before any DECIDE");
    t[0] = (as_trap_t){ .who = 0, .type = FS_AGREE_DECIDE, .nth = 2 };
    run_traps(t, 1, "after DECIDE reached one child");
}

/* ERA's hole: the root decides, tells one child and dies; that child
 * returns and dies before telling anyone.  The survivors must still decide
 * what both decided. */
Test(agree_sim, root_and_the_child_it_told_die_after_deciding)
{
    as_trap_t t[2] = {
        { .who = 0, .type = FS_AGREE_DECIDE, .nth = 2 },
        { .who = 1, .type = FS_AGREE_DECIDE, .nth = 1 },
    };

    run_traps(t, 2, "root and first child die deciding");
    t[0].nth = 1;                     /* root decided, told no one */
    run_traps(t, 1, "root dies deciding");
}

/* 5. Each coordinator dies as it proposes, after reaching one child. */
Test(agree_sim, a_cascade_of_coordinators_dies_proposing)
{
    as_trap_t t[7];
    uint32_t r;

    for (r = 0; r < 7; r++)
        t[r] = (as_trap_t){ .who = r, .type = FS_AGREE_PROPOSE, .nth = 1, .after = 1 };
    run_traps(t, 7, "cascade");
}

/* 6. Interior nodes (4: children 5 and 6; 2: child 3) die gathering or
 *    accepting; their orphans are adopted. */
Test(agree_sim, interior_nodes_die_while_gathering_or_accepting)
{
    as_trap_t t[2] = { { .who = 4, .type = FS_AGREE_UP, .nth = 1 } };

    run_traps(t, 1, "4 dies gathering");
    t[0].nth = 2;
    run_traps(t, 1, "4 dies accepting");
    t[0] = (as_trap_t){ .who = 4, .type = FS_AGREE_PROPOSE, .nth = 1 };
    t[1] = (as_trap_t){ .who = 2, .type = FS_AGREE_UP, .nth = 2, .after = 1 };
    run_traps(t, 2, "4 dies forwarding PROPOSE, 2 after accepting");
}

/* 7. A zombie coordinator: excluded, half the members know at once, the
 *    others (and itself) only much later; it keeps proposing meanwhile. */
Test(agree_sim, a_zombie_coordinator_cannot_split_the_decision)
{
    as_sim_t *s = malloc(sizeof(*s));
    uint64_t seed;

    for (seed = 1; seed <= 60; seed++) {
        as_init(s, 8, seed % 2, seed);
        s->jitter = 0.5;
        s->learn_min = s->learn_max = 0.5;
        s->slow = 0xAA;                   /* odd ranks learn late */
        s->slow_delay = 40;
        /* excluded before it proposes, while deciding, while proposing */
        if (seed % 3 != 0) {
            s->trap[0] = (as_trap_t){ .who = 0, .nth = 1, .after = 1, .zombie = 60,
                                      .type = (seed % 3 == 1) ? FS_AGREE_DECIDE
                                                              : FS_AGREE_PROPOSE };
            s->ntrap = 1;
        }
        as_start_all(s, 0);
        if (seed % 3 == 0)
            as_kill(s, 0, 60);
        as_run(s, AS_NEVER);
        as_check(s, "zombie coordinator");
        as_fini(s);
    }
    free(s);
}

/* Two different proposals accepted at once, and the coordinator must take
 * the higher ballot's: 0 proposes P0, only 4 accepts it (1 and 2 know 0
 * dead before its PROPOSE arrives) and 4 is excluded; 1 knows it, proposes
 * a fresh P1 without 4, commits it and dies deciding; 2, which still sees
 * 4, gathers P0 (ballot 0, from 4) and P1 (ballot 1, from 3). */
Test(agree_sim, the_highest_accepted_ballot_is_reproposed)
{
    as_sim_t *s = malloc(sizeof(*s));
    uint32_t o;

    as_init(s, 5, 0, 21);
    for (o = 1; o < 5; o++) {
        s->learn_at[o][0] = (o == 4) ? 10 : 0.5;
        s->learn_at[o][4] = (o == 2) ? 100 : 0.1;
        s->learn_at[o][1] = 0.5;
    }
    s->trap[0] = (as_trap_t){ .who = 0, .type = FS_AGREE_PROPOSE, .nth = 3, .after = 1 };
    s->trap[1] = (as_trap_t){ .who = 1, .type = FS_AGREE_DECIDE, .nth = 1 };
    s->ntrap = 2;
    as_start_all(s, 0);
    as_run(s, 3.5);
    cr_assert_eq(s->p[0].stopped, 1, "0 did not die proposing");
    as_kill(s, 4, 1000);
    as_run(s, AS_NEVER);
    as_check(s, "two accepted proposals");
    cr_assert(s->p[1].dec[0].decided && s->p[2].dec[0].decided);
    cr_assert_eq(s->p[1].dec[0].fd, (1ull << 0) | (1ull << 4), "1 decided without 4");
    as_fini(s);
    free(s);
}

/* 9. A late entrant: messages for the instance reach it long before it
 *    starts; and one that never starts because it died first. */
Test(agree_sim, a_late_entrant_finds_its_instance_waiting)
{
    as_sim_t *s = malloc(sizeof(*s));
    uint32_t r;

    as_init(s, 10, 0, 9);
    for (r = 0; r < s->n; r++)
        as_schedule_start(s, r, (r == 0 || r == 6) ? 100 : 0);
    as_run(s, AS_NEVER);
    as_check(s, "late entrants");
    cr_assert(last_decision(s, 0) >= 100);
    as_fini(s);
    free(s);
}

/* 10./11. Many instances in a row, and several outstanding at once, with
 *    kills at random moments: every one decided uniformly, records bounded. */
static void run_many(uint32_t outstanding, uint64_t seed)
{
    as_sim_t *s = malloc(sizeof(*s));
    uint32_t r, f;
    char ctx[64];

    as_init(s, 16, seed % 2, seed);
    s->ninst = 200;
    s->outstanding = outstanding;
    s->jitter = 1.5;
    s->learn_min = 0.5;
    s->learn_max = 8;
    s->think = 0.3;
    as_start_all(s, 1);
    for (f = 0; f < 4; f++) {
        as_run(s, 150.0 * (f + 1));
        as_kill(s, (uint32_t)(as_rand(&s->rng) % 16), (f == 2) ? 30 : 0);
    }
    as_run(s, AS_NEVER);
    snprintf(ctx, sizeof ctx, "many, outstanding %u seed %llu", outstanding,
             (unsigned long long)seed);
    as_check(s, ctx);
    for (r = 0; r < s->n; r++) {
        fs_agree_counters_t c;

        if (s->p[r].killed_at < AS_NEVER)
            continue;
        fs_agree_counters(s->p[r].a, &c);
        cr_assert_leq(c.records, outstanding + 1, "%s: %u keeps %llu records", ctx, r,
                      (unsigned long long)c.records);
    }
    as_fini(s);
    free(s);
}

Test(agree_sim, many_instances_in_a_row_keep_few_records)
{
    run_many(1, 10);
    run_many(1, 11);
}

Test(agree_sim, outstanding_instances_interleave)
{
    run_many(3, 12);
    run_many(2, 13);
}

/* 14. Random: n, kills (some zombies), their moments, views' delays,
 *     jitter, tree shape, instances and overlap. */
Test(agree_sim, random_failure_schedules_keep_every_property)
{
    uint64_t seed, seeds = getenv("FS_AGREE_SEEDS") ? strtoull(getenv("FS_AGREE_SEEDS"),
                                                                NULL, 10) : 10000;
    as_sim_t *s = malloc(sizeof(*s));
    double worst = 0;

    for (seed = 1; seed <= seeds; seed++) {
        uint64_t rng = seed * 0x9E3779B97F4A7C15ull;
        uint32_t n = 1 + (uint32_t)(as_rand(&rng) % AS_MAX), f, k, nf;
        double horizon;
        char ctx[64];

        as_init(s, n, (int)(as_rand(&rng) % 2), seed);
        s->ninst = 1 + (uint32_t)(as_rand(&rng) % 4);
        s->outstanding = 1 + (uint32_t)(as_rand(&rng) % 2);
        s->jitter = as_uniform(&rng, 0, 3);
        s->learn_min = as_uniform(&rng, 0.1, 3);
        s->learn_max = s->learn_min + as_uniform(&rng, 0, 20);
        s->think = as_uniform(&rng, 0, 2);
        horizon = 4.0 * (ceil_log2(n) + 1) * (1 + s->jitter) * s->ninst;
        nf = n > 1 ? (uint32_t)(as_rand(&rng) % n) : 0;          /* f <= n - 1 */
        as_start_all(s, as_uniform(&rng, 0, 4));
        for (f = 0; f < nf; f++) {
            as_run(s, s->now + as_uniform(&rng, 0, horizon / (nf + 1)));
            do {
                k = (uint32_t)(as_rand(&rng) % n);
            } while (s->p[k].killed_at < AS_NEVER);
            as_kill(s, k, (as_rand(&rng) % 5 == 0) ? as_uniform(&rng, 1, 30) : 0);
        }
        as_run(s, AS_NEVER);
        snprintf(ctx, sizeof ctx, "random seed %llu n %u f %u", (unsigned long long)seed,
                 n, nf);
        as_check(s, ctx);
        if (n > 1) {
            double ratio = (double)s->msgs / (4.0 * (n - 1) * (nf + 1) * s->ninst);

            cr_assert_leq(ratio, 1.0, "%s: %llu messages, over 4(n-1)(f+1) per instance",
                          ctx, (unsigned long long)s->msgs);                     /* M */
            if (ratio > worst)
                worst = ratio;
        }
        as_fini(s);
    }
    if (getenv("FS_AGREE_SEEDS"))
        fprintf(stderr, "worst messages / (4(n-1)(f+1) x instances): %.2f\n", worst);
    free(s);
}
