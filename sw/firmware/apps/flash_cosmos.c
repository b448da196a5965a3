/* The Flash-Cosmos SSD App (Flash-Cosmos Section 6.2; RPCs in flash_cosmos_abi.h): fc_write
 * stores operand pages with ESP, raw, in the blocks of their group; fc_read plans and runs the
 * MWS commands of an expression and streams the result from the C-latch into a DATA request.
 * It keeps, per group and unit, the ESP blocks it holds and how many operands they have, and per
 * operand whether its page is inverted (the per-page metadata the planner needs). SPU-OS checks
 * every block against the ESP blocks the app holds (SPU_SYS_FC).
 *
 * The latches [Flash-Cosmos 6.1, Figure 15a; models/nand/plane.cpp]: a sensing of slots in
 * several blocks gives the OR over blocks of the AND of each block's selected wordlines; INIT_S
 * loads it into the S-latch (else S &= it), INVERSE complements it (only with INIT_S), TRANSFER
 * ORs S into the C-latch, and XOR does C ^= S. The plan is worked out twice, once to count the
 * commands (the last one carries the result out) and once to issue them. */
#include "flash_cosmos_abi.h"
#include "spu_app.h"

static uint16_t blk[FC_GROUPS][FC_UNITS][FC_GROUP_BLOCKS];             /* block + 1; 0: none */
static uint8_t count[FC_GROUPS][FC_UNITS];                             /* operands written */
static uint8_t inv[FC_GROUPS][FC_GROUP_BLOCKS * FC_MAX_WORDLINES / 8]; /* bit per seq */
static struct fc_operand ops[FC_MAX_OPERANDS];
static struct fc_read_args ra;
static struct spu_fc_cmd cmd;

/* A slot being gathered: a block and its wordlines. */
struct slot {
    uint32_t block, lo, hi;
};
static struct slot pack[SPU_FC_MAX_BLOCKS], term_blocks[FC_MAX_OPERANDS];
static unsigned packed;

static struct {
    int exec;
    uint32_t total, issued, sensings, err, first;
} pl;

static uint32_t fc(uint32_t op, uint32_t bytes) {
    return spu_syscall(SPU_SYS_FC, op, (uint32_t)&cmd, bytes, 0);
}

static uint32_t block_of(const struct fc_operand* o) {
    return blk[o->group][ra.unit][o->seq / ra.wordlines] - 1u;
}
static uint32_t wl_of(const struct fc_operand* o) { return o->seq % ra.wordlines; }
static unsigned neg(const struct fc_operand* o) {
    return (inv[o->group][o->seq >> 3] >> (o->seq & 7)) & 1;
}

static void add_wl(struct slot* s, uint32_t wl) {
    if (wl < 32)
        s->lo |= 1u << wl;
    else
        s->hi |= 1u << (wl - 32);
}

/* One command of the plan; the MWS's slots are s[0..n). */
static void issue(uint32_t op, const struct slot* s, unsigned n, uint32_t flags) {
    if (op == SPU_FC_MWS) {
        flags |= pl.first;
        pl.first = 0;
        ++pl.sensings;
    }
    ++pl.issued;
    if (!pl.exec || pl.err) return;
    cmd.die = ra.die;
    cmd.plane = ra.plane;
    cmd.flags = flags;
    cmd.slots = n;
    for (unsigned i = 0; i < n; ++i) {
        cmd.slot[i].block = s[i].block;
        cmd.slot[i].pbm_lo = s[i].lo;
        cmd.slot[i].pbm_hi = s[i].hi;
    }
    /* The last command carries the result out; ISP's reads each move the piece's bytes. */
    pl.err = fc(op, op == SPU_FC_ACC || pl.issued == pl.total ? ra.bytes : 0);
}

static void sense_one(const struct fc_operand* o, uint32_t flags) {
    struct slot s = {block_of(o), 0, 0};
    add_wl(&s, wl_of(o));
    issue(SPU_FC_MWS, &s, 1, flags);
}

static void flush_pack(void) {
    if (packed) issue(SPU_FC_MWS, pack, packed, SPU_FC_INIT_S | SPU_FC_TRANSFER);
    packed = 0;
}

/* The distinct blocks of operands [a, b), with their wordlines; returns how many. */
static unsigned gather(unsigned a, unsigned b) {
    unsigned nb = 0;
    for (unsigned i = a; i < b; ++i) {
        const uint32_t block = block_of(&ops[i]);
        unsigned k = 0;
        while (k < nb && term_blocks[k].block != block) ++k;
        if (k == nb) {
            term_blocks[nb].block = block;
            term_blocks[nb].lo = term_blocks[nb].hi = 0;
            ++nb;
        }
        add_wl(&term_blocks[k], wl_of(&ops[i]));
    }
    return nb;
}

/* One term: the AND of operands [a, b), each complemented when `flip`, ORed into the C-latch. */
static void term(unsigned a, unsigned b, unsigned flip, unsigned serial) {
    unsigned negs = 0;
    for (unsigned i = a; i < b; ++i) negs += neg(&ops[i]) ^ flip;
    if (serial) { /* ParaBit: one wordline per sensing, ANDed in the S-latch */
        if (negs && b - a > 1) pl.err = FC_E_PLAN;
        for (unsigned i = a; i < b; ++i)
            sense_one(&ops[i], (i == a ? SPU_FC_INIT_S : 0) | (i + 1 == b ? SPU_FC_TRANSFER : 0) |
                                   (negs ? SPU_FC_INVERSE : 0));
        return;
    }
    const unsigned nb = gather(a, b);
    if (negs == 0 && nb == 1) { /* intra-block AND: packed with others into one sensing */
        unsigned k = 0;
        while (k < packed && pack[k].block != term_blocks[0].block) ++k;
        if (k < packed || packed == SPU_FC_MAX_BLOCKS) flush_pack();
        pack[packed].block = term_blocks[0].block; /* field by field: no memcpy here */
        pack[packed].lo = term_blocks[0].lo;
        pack[packed++].hi = term_blocks[0].hi;
    } else if (negs == 0) { /* one sensing per block, ANDed in the S-latch */
        for (unsigned k = 0; k < nb; ++k)
            issue(SPU_FC_MWS, &term_blocks[k], 1,
                  (k == 0 ? SPU_FC_INIT_S : 0) | (k + 1 == nb ? SPU_FC_TRANSFER : 0));
    } else if (negs == b - a && nb == b - a && nb <= SPU_FC_MAX_BLOCKS) {
        /* AND of complements = NOR: one inverse sensing, one wordline per block */
        issue(SPU_FC_MWS, term_blocks, nb, SPU_FC_INIT_S | SPU_FC_INVERSE | SPU_FC_TRANSFER);
    } else {
        pl.err = FC_E_PLAN;
    }
}

static unsigned first_term_end(unsigned n) {
    unsigned b = 1;
    while (b < n && ops[b].term == ops[0].term) ++b;
    return b;
}

static void set_slot(struct slot* d, const struct slot* from) { /* field by field: no memcpy */
    d->block = from->block;
    d->lo = from->lo;
    d->hi = from->hi;
}

/* The first term spans several blocks and every later term is one operand, each in a block of
 * its own, few enough to join each of the first term's sensings; their slots go to pack[]. */
static int folds_into_first(unsigned n) {
    const unsigned b = first_term_end(n), nb = gather(0, b);
    if (nb < 2 || n - b + 1 > SPU_FC_MAX_BLOCKS) return 0;
    for (unsigned i = b; i < n; ++i) {
        const uint32_t block = block_of(&ops[i]);
        if (i > b && ops[i].term == ops[i - 1].term) return 0;
        for (unsigned k = 0; k < nb; ++k)
            if (term_blocks[k].block == block) return 0;
        for (unsigned e = 0; e < i - b; ++e)
            if (pack[e].block == block) return 0;
        pack[i - b].block = block;
        pack[i - b].lo = pack[i - b].hi = 0;
        add_wl(&pack[i - b], wl_of(&ops[i]));
    }
    return 1;
}

static void plan(void) {
    const unsigned op = ra.op & 0xF, serial = ra.op & FC_SERIAL, n = ra.n;
    pl.issued = pl.sensings = pl.err = 0;
    pl.first = SPU_FC_INIT_C;
    packed = 0;
    unsigned one_term = 1, single_literals = 1, negs = 0;
    for (unsigned i = 0; i < n; ++i) negs += neg(&ops[i]);
    for (unsigned i = 1; i < n; ++i) one_term &= ops[i].term == ops[0].term;
    for (unsigned i = 1; i < n; ++i) single_literals &= ops[i].term != ops[i - 1].term;
    if (ra.op & FC_ISP) { /* a left fold in the channel's accelerator */
        for (unsigned i = 0; i < n; ++i) {
            uint32_t f = neg(&ops[i]) ? SPU_FC_ACC_INVERT : 0;
            if (i)
                f |= op >= FC_OP_XOR                  ? SPU_FC_ACC_XOR
                     : ops[i].term == ops[i - 1].term ? SPU_FC_ACC_AND
                                                      : SPU_FC_ACC_OR;
            if (i > 1 && op < FC_OP_XOR && ops[i].term == ops[i - 1].term &&
                ops[i - 1].term != ops[0].term)
                pl.err = FC_E_PLAN; /* an AND after an OR does not fold */
            if (i + 1 == n)
                f |= SPU_FC_ACC_OUT |
                     (op == FC_OP_NSOP || op == FC_OP_XNOR ? SPU_FC_ACC_COMPLEMENT : 0);
            cmd.block = block_of(&ops[i]);
            cmd.page = wl_of(&ops[i]);
            issue(SPU_FC_ACC, 0, 0, f);
        }
    } else if (op == FC_OP_READ) {
        cmd.block = block_of(&ops[0]);
        cmd.page = wl_of(&ops[0]);
        issue(SPU_FC_READ, 0, 0, 0);
    } else if (op == FC_OP_XOR || op == FC_OP_XNOR) {
        for (unsigned i = 0; i < n; ++i) {
            sense_one(&ops[i],
                      SPU_FC_INIT_S | (i == 0 ? SPU_FC_TRANSFER : 0) |
                          ((neg(&ops[i]) ^ (i == 0 && op == FC_OP_XNOR)) ? SPU_FC_INVERSE : 0));
            if (i) issue(SPU_FC_XOR, 0, 0, 0);
        }
    } else if (op == FC_OP_SOP && !serial && !negs && folds_into_first(n)) {
        /* (AND over blocks B_j) OR singles = AND_j (B_j OR singles): every sensing of the first
         * term names the singles' blocks too, within the power cap (KCS's clique vector) */
        const unsigned nb = gather(0, first_term_end(n)), extra = n - first_term_end(n);
        struct slot s[SPU_FC_MAX_BLOCKS];
        for (unsigned k = 0; k < nb; ++k) {
            set_slot(&s[0], &term_blocks[k]);
            for (unsigned e = 0; e < extra; ++e) set_slot(&s[1 + e], &pack[e]);
            issue(SPU_FC_MWS, s, 1 + extra,
                  (k == 0 ? SPU_FC_INIT_S : 0) | (k + 1 == nb ? SPU_FC_TRANSFER : 0));
        }
    } else if (op == FC_OP_SOP) {
        for (unsigned a = 0, b; a < n; a = b) {
            for (b = a + 1; b < n && ops[b].term == ops[a].term;) ++b;
            term(a, b, 0, serial);
        }
    } else if (op == FC_OP_NSOP && one_term && !serial && n > 1 && negs == 0) {
        /* NOT(AND) = OR over blocks of each block's inverse sensing */
        const unsigned nb = gather(0, n);
        for (unsigned k = 0; k < nb; ++k)
            issue(SPU_FC_MWS, &term_blocks[k], 1, SPU_FC_INIT_S | SPU_FC_INVERSE | SPU_FC_TRANSFER);
    } else if (op == FC_OP_NSOP && one_term) { /* NOT(AND) = OR of complements */
        for (unsigned i = 0; i < n; ++i) term(i, i + 1, 1, serial);
    } else if (op == FC_OP_NSOP && single_literals) { /* NOT(OR) = AND of complements */
        term(0, n, 1, serial);
    } else {
        pl.err = FC_E_PLAN;
    }
    flush_pack();
    if (!pl.exec) pl.total = pl.issued;
}

/* FC_WRITE: the operand page goes to wordline seq % wordlines of the group's block. */
static void fc_write(const struct spu_rpc_header* h) {
    struct fc_write_args a;
    uint32_t r = h->length > sizeof a ? rpc_receive_bytes(&a, sizeof a) : FC_E_ARGS;
    if (!r && (a.group >= FC_GROUPS || a.unit >= FC_UNITS || a.wordlines == 0 ||
               a.wordlines > FC_MAX_WORDLINES || a.seq / a.wordlines >= FC_GROUP_BLOCKS))
        r = FC_E_ARGS;
    if (!r && a.seq != count[a.group][a.unit]) r = FC_E_ORDER;
    if (r) {
        rpc_send_response(r);
        return;
    }
    uint16_t* e = &blk[a.group][a.unit][a.seq / a.wordlines];
    const unsigned fresh = a.seq % a.wordlines == 0;
    cmd.die = a.die;
    cmd.plane = a.plane;
    if (fresh) r = fc(SPU_FC_ALLOC, 0);
    if (fresh && !r) *e = (uint16_t)(cmd.block + 1);
    cmd.block = *e - 1u;
    cmd.page = a.seq % a.wordlines;
    if (!r) r = fc(SPU_FC_PROGRAM, h->length - sizeof a);
    if (r && fresh && *e) { /* the block goes back: the next try allocates again */
        fc(SPU_FC_RELEASE, 0);
        *e = 0;
    }
    if (!r) {
        ++count[a.group][a.unit];
        uint8_t* bits = &inv[a.group][a.seq >> 3];
        const uint8_t bit = (uint8_t)(1u << (a.seq & 7));
        *bits = (uint8_t)((*bits & ~bit) | (a.flags & FC_INVERTED ? bit : 0));
    }
    rpc_send_response(r);
}

/* FC_READ: the expression's result goes to the originating HRE in a DATA request. */
static void fc_read(const struct spu_rpc_header* h) {
    uint32_t r = h->length > sizeof ra ? rpc_receive_bytes(&ra, sizeof ra) : FC_E_ARGS;
    if (!r && (ra.n == 0 || ra.n > FC_MAX_OPERANDS || ra.unit >= FC_UNITS || ra.bytes == 0 ||
               ra.wordlines == 0 || ra.wordlines > FC_MAX_WORDLINES ||
               h->length != sizeof ra + ra.n * sizeof(struct fc_operand) ||
               ((ra.op & 0xF) == FC_OP_READ && ra.n != 1) || (ra.op & 0xF) > FC_OP_READ))
        r = FC_E_ARGS;
    if (!r) r = rpc_receive_bytes(ops, ra.n * sizeof *ops);
    for (unsigned i = 0; !r && i < ra.n; ++i)
        if (ops[i].group >= FC_GROUPS || ops[i].seq >= count[ops[i].group][ra.unit] ||
            ops[i].seq / ra.wordlines >= FC_GROUP_BLOCKS ||
            !blk[ops[i].group][ra.unit][ops[i].seq / ra.wordlines])
            r = FC_E_ARGS;
    pl.exec = 0;
    if (!r) plan();
    if (!r) r = pl.err;
    if (!r) {
        const struct fc_data d = {ra.cookie, ra.bytes, pl.sensings};
        r = rpc_start_request(h->src, h->origin, SPU_OS_RPC_ID(h->rpc_id >> 8, FC_DATA),
                              sizeof d + ra.bytes);
        if (!r) r = rpc_append_request(&d, sizeof d);
        pl.exec = 1;
        if (!r) plan();
        if (!r) r = pl.err;
        if (!r) r = rpc_finish_request();
        if (!r) r = rpc_wait_response();
    }
    rpc_send_response(r);
}

/* FC_RELEASE: the group's blocks on the unit go back; the group starts empty. */
static void fc_release(const struct spu_rpc_header* h) {
    struct fc_release_args a;
    uint32_t r = h->length == sizeof a ? rpc_receive_bytes(&a, sizeof a) : FC_E_ARGS;
    if (!r && (a.group >= FC_GROUPS || a.unit >= FC_UNITS)) r = FC_E_ARGS;
    cmd.die = a.die;
    cmd.plane = a.plane;
    for (unsigned b = 0; !r && b < FC_GROUP_BLOCKS; ++b) {
        uint16_t* e = &blk[a.group][a.unit][b];
        cmd.block = *e - 1u;
        if (*e) r = fc(SPU_FC_RELEASE, 0);
        if (!r) *e = 0;
    }
    if (!r) count[a.group][a.unit] = 0;
    rpc_send_response(r);
}

SPU_APP(SPU_HANDLERS(fc_write, fc_read, fc_release));
