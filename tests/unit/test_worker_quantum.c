/* Unit tests for a stream flow's turn (worker_quantum): its share of the worker's round, but
 * never less than WORKER_QUANTUM_MIN, whatever the number of flows; a sender's turn
 * (worker_tx_turn) at most WORKER_TX_TURN_MAX or one write. */
#define _GNU_SOURCE
#include "test_util.h"

#include "worker.h"

#define KiB 1024u
#define MiB (1024u * 1024u)

static void test_share_of_the_round(void **state)
{
    (void)state;
    /* few flows: the round split between them */
    assert_int_equal(worker_quantum(1), WORKER_ROUND_BYTES);
    assert_int_equal(worker_quantum(2), WORKER_ROUND_BYTES / 2);
    assert_int_equal(worker_quantum(16), 2 * MiB);
    assert_int_equal(worker_quantum(50), WORKER_ROUND_BYTES / 50); /* 655 KiB */
    assert_int_equal(worker_quantum(0), WORKER_ROUND_BYTES);       /* no flows: no division */
}

static void test_least_turn(void **state)
{
    (void)state;
    /* 2,000 flows a worker (-P 4000 -T 2): 512 KiB each, not 16 KiB: the round grows to 1 GiB
     * rather than every syscall being cut short */
    assert_int_equal(WORKER_QUANTUM_MIN, 512 * KiB);
    assert_int_equal(worker_quantum(2000), WORKER_QUANTUM_MIN);
    assert_int_equal(worker_quantum(100), WORKER_QUANTUM_MIN); /* 328 KiB of the round */
    assert_int_equal(worker_quantum(64), WORKER_QUANTUM_MIN);
    assert_int_equal(worker_quantum(63), WORKER_ROUND_BYTES / 63);
}

static void test_sending_turn(void **state)
{
    (void)state;
    assert_int_equal(WORKER_TX_TURN_MAX, 1 * MiB);
    /* -P 10 -T 2: 5 flows a worker, a quantum of 6.4 MiB; a sender moves 1 MiB a turn */
    assert_int_equal(worker_tx_turn(worker_quantum(5), 1 * MiB), 1 * MiB);
    assert_int_equal(worker_tx_turn(worker_quantum(5), 128 * KiB), 1 * MiB); /* 8 writes */
    /* a write larger than the cap is never cut short */
    assert_int_equal(worker_tx_turn(worker_quantum(5), 4 * MiB), 4 * MiB);
    assert_int_equal(worker_tx_turn(worker_quantum(2), 32 * MiB), WORKER_ROUND_BYTES / 2);
    /* many flows: the quantum is already smaller */
    assert_int_equal(worker_tx_turn(worker_quantum(2000), 1 * MiB), WORKER_QUANTUM_MIN);
    assert_int_equal(worker_tx_turn(worker_quantum(50), 1 * MiB), WORKER_ROUND_BYTES / 50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_share_of_the_round),
        cmocka_unit_test(test_least_turn),
        cmocka_unit_test(test_sending_turn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
