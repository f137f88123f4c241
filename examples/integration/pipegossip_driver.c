/* A bare-metal driver of the control block: issue an image, run, read the counters.
 * Uses only pipegossip_regs.h (pipegossip hw regmap --format c); see docs/integration.md.
 * `base` is where the block's 4 KiB AXI4-Lite (or Wishbone) window sits in your map. */
#include <stdint.h>
#include "pipegossip_regs.h"

/* One entry of `pipegossip hw program --format json` (kind, node, addr, data). */
typedef struct {
    uint32_t kind, node, addr;
    const uint32_t *data;  /* LOAD_WORDS words, least significant first */
} pg_entry;

#define PG_REG(base, name) ((base)[PIPEGOSSIP_##name##_OFFSET / 4u])

/* Issue one entry: its address, its data most significant word first, then LOAD_GO. */
void pg_issue(volatile uint32_t *base, const pg_entry *e)
{
    uint32_t words = PG_REG(base, LOAD_WORDS);
    PG_REG(base, LOAD_ADDR) = e->addr;
    for (uint32_t i = words; i-- > 0;)
        PG_REG(base, LOAD_DATA) = e->data[i];
    PG_REG(base, LOAD_GO) = (e->kind << PIPEGOSSIP_LOAD_GO_KIND_LSB)
                          | (e->node << PIPEGOSSIP_LOAD_GO_NODE_LSB);
}

/* Issue the loads, run one collective, issue the checks; returns MISMATCHES. */
uint32_t pg_run_image(volatile uint32_t *base, const pg_entry *loads, unsigned n_loads,
                      const pg_entry *checks, unsigned n_checks)
{
    if ((PG_REG(base, ID) & PIPEGOSSIP_ID_MAGIC_MASK) >> PIPEGOSSIP_ID_MAGIC_LSB
            != PIPEGOSSIP_MAGIC)
        return UINT32_MAX;
    for (unsigned i = 0; i < n_loads; i++)
        pg_issue(base, &loads[i]);
    PG_REG(base, CMD) = PIPEGOSSIP_CMD_CLEAR_MASK;
    PG_REG(base, CMD) = PIPEGOSSIP_CMD_ARM_MASK;
    while (!(PG_REG(base, STATUS) & PIPEGOSSIP_STATUS_DONE_MASK)
           || (PG_REG(base, STATUS) & PIPEGOSSIP_STATUS_ARMED_MASK))
        ;
    for (unsigned i = 0; i < n_checks; i++)
        pg_issue(base, &checks[i]);
    return PG_REG(base, MISMATCHES);
}
