/* The Atomic-Writes SSD App (Willow Section 4.3; RPCs, store layout and the protocol in
 * atomic_writes_abi.h). Logged data goes from the network interface straight to the log slot's
 * data area; the entries stay in DMEM until PREPARE or COMMIT writes them, with the record, in
 * one NVM write (one page program on the flash: all or nothing across a power loss). Applying a
 * log copies each entry's data to its target inside the store (NVM_COPY), and runs again safely
 * after a power loss (redo). On a store with a write cache the order reaches the flash through
 * flushes: the logged data before the record that names it, the applied targets before the
 * slot is freed (each flush costs nothing write-through). The coordinator is the lowest-numbered participant, so a handler
 * waiting for a peer only ever waits for a higher-numbered SPU and the waits cannot form a cycle
 * over the SPUs' two lanes. While a coordinator waits for a peer, other handlers run: a slot
 * that is committing is marked PREPARED in DMEM, so that no LOGWRITE or host ABORT touches it. */
#include "atomic_writes_abi.h"
#include "spu_app.h"

static struct { uint32_t base, bytes, slot_bytes, node, spus, app, left, ready; } aw;
static struct slot {
    struct aw_record r;
    struct aw_entry e[AW_MAX_ENTRIES];
} tx[AW_SLOTS];

static uint32_t slot_addr(unsigned i) { return aw.base + AW_RECORD_BYTES + i * aw.slot_bytes; }
static uint32_t data_addr(unsigned i) { return slot_addr(i) + AW_RECORD_BYTES; }

/* The slot's record and entries, in one write, durable when it returns: after the data it
 * names. */
static uint32_t persist(unsigned i) {
    uint32_t r = nvm_flush();
    if (!r)
        r = nvm_write(slot_addr(i), &tx[i],
                      sizeof(struct aw_record) + tx[i].r.entries * sizeof(struct aw_entry));
    return r ? r : nvm_flush();
}

static uint32_t release(unsigned i) {
    static const uint32_t free_state = AW_FREE;
    uint32_t r = AW_OK;
    if (tx[i].r.state >= AW_PREPARED) r = nvm_flush(); /* the applied targets first */
    if (!r && tx[i].r.state >= AW_PREPARED) r = nvm_write(slot_addr(i), &free_state, 4);
    if (!r) tx[i].r.state = AW_FREE;
    return r;
}

static int find(uint32_t origin, uint32_t id) {
    for (unsigned i = 0; i < AW_SLOTS; ++i)
        if (tx[i].r.state != AW_FREE && tx[i].r.origin == origin && tx[i].r.tx == id) return i;
    return -1;
}

/* The next n payload bytes into p, within what the request carries. */
static uint32_t take(void* p, uint32_t n) {
    if (n > aw.left) return AW_E_ARGS;
    aw.left -= n;
    return rpc_receive_bytes(p, n);
}

/* Handler prologue: whether the app is set up, and the request's payload to take. */
static uint32_t begin(const struct spu_rpc_header* h) {
    aw.app = h->rpc_id >> 8;
    aw.left = h->length;
    return aw.ready ? AW_OK : AW_E_STATE;
}

/* One LOGWRITE from the payload: its arguments, then its data into the log. A write of the
 * same range as an earlier one of the transaction replaces that one's data (an edit). */
static uint32_t log_write(uint32_t origin) {
    struct aw_write_args w;
    uint32_t r = take(&w, sizeof w);
    if (r) return r;
    if (w.bytes == 0 || w.bytes > AW_MAX_WRITE || w.bytes > aw.left || w.addr + w.bytes < w.addr ||
        (w.addr < aw.base + aw.bytes && w.addr + w.bytes > aw.base))
        return AW_E_ARGS;
    r = nvm_write(w.addr, &w, 0); /* the process may write the target */
    if (r) return r;
    int i = find(origin, w.tx);
    if (i < 0) {
        for (i = 0; i < (int)AW_SLOTS && tx[i].r.state != AW_FREE; ++i) continue;
        if (i == AW_SLOTS) return AW_E_BUSY;
        tx[i].r.state = AW_ACTIVE;
        tx[i].r.origin = origin;
        tx[i].r.tx = w.tx;
        tx[i].r.entries = tx[i].r.used = 0;
    }
    struct slot* t = &tx[i];
    if (t->r.state != AW_ACTIVE) return AW_E_STATE;
    unsigned k = 0;
    while (k < t->r.entries && !(t->e[k].addr == w.addr && t->e[k].bytes == w.bytes)) ++k;
    const uint32_t need = (w.bytes + 3) & ~3u;
    if (k == t->r.entries &&
        (k == AW_MAX_ENTRIES || need > aw.slot_bytes - AW_RECORD_BYTES - t->r.used))
        return AW_E_FULL;
    const uint32_t at = k < t->r.entries ? t->e[k].at : t->r.used;
    aw.left -= w.bytes;
    r = rpc_receive_to_nvm(data_addr(i) + at, w.bytes);
    if (!r && k == t->r.entries) {
        t->e[k].addr = w.addr;
        t->e[k].bytes = w.bytes;
        t->e[k].at = at;
        t->r.entries = k + 1;
        t->r.used += need;
    }
    return r;
}

/* Sends `handler` about slot t's transaction to every other participant (they are above this
 * SPU), all at once (waiting whenever SPU_OS_MAX_AWAITED are out); returns how many answers
 * are still to come, with the first failure in *r. */
static unsigned send_all(unsigned handler, const struct slot* t, uint32_t* r) {
    const struct aw_tx_args a = {t->r.tx, t->r.origin};
    unsigned out = 0;
    for (unsigned n = aw.node + 1; n < aw.spus && !*r; ++n) {
        if (!(t->r.peer >> n & 1)) continue;
        *r = rpc_start_request(n, 0, SPU_OS_RPC_ID(aw.app, handler), sizeof a);
        if (!*r) *r = rpc_append_request(&a, sizeof a);
        if (!*r) *r = rpc_finish_request();
        if (!*r && ++out == SPU_OS_MAX_AWAITED) {
            *r = rpc_wait_response();
            out = 0;
        }
    }
    return out;
}

/* The answers send_all left to come: r, or the first of them that failed. */
static uint32_t gather(unsigned out, uint32_t r) {
    const uint32_t w = out ? rpc_wait_response() : AW_OK;
    return r ? r : w;
}

/* Committed slot i: the other participants APPLY their logs while this SPU applies its own;
 * then it is forgotten. A failure leaves it COMMITTED for RECOVER to finish. */
static uint32_t finish(unsigned i) {
    struct slot* t = &tx[i];
    uint32_t r = AW_OK;
    const unsigned out = send_all(AW_APPLY, t, &r);
    for (unsigned k = 0; k < t->r.entries && !r; ++k)
        r = nvm_copy(t->e[k].addr, data_addr(i) + t->e[k].at, t->e[k].bytes);
    r = gather(out, r);
    if (!r) r = release(i);
    return r;
}

/* Two-phase commit with this SPU as the coordinator: PREPARE to every other participant at
 * once (the paper's broadcast), then the commit point. */
static uint32_t commit(uint32_t origin, const struct aw_commit_args* c) {
    const int i = find(origin, c->tx);
    if (i < 0) return AW_E_UNKNOWN;
    struct slot* t = &tx[i];
    /* Applying met a failure after the commit point: finish it (redo is idempotent). */
    if (t->r.state == AW_COMMITTED) return finish(i) ? AW_E_INCOMPLETE : AW_OK;
    if (t->r.state != AW_ACTIVE) return AW_E_STATE;
    /* Participants are SPUs, the lowest of them this one (the coordinator). */
    const uint32_t higher = ((1u << aw.spus) - 1) & ~((2u << aw.node) - 1);
    if ((c->participants & ~higher) != 1u << aw.node) return AW_E_ARGS;
    t->r.state = AW_PREPARED;
    t->r.peer = c->participants;
    uint32_t r = AW_OK;
    r = gather(send_all(AW_PREPARE, t, &r), r);
    if (!r) {
        t->r.state = AW_COMMITTED;
        r = persist(i); /* the commit point */
    }
    if (!r) return finish(i) ? AW_E_INCOMPLETE : AW_OK;
    /* Aborted: every participant drops its log (one that failed may have prepared before its
     * answer was lost; one that never heard of it answers AW_E_UNKNOWN). */
    uint32_t ignored = AW_OK;
    gather(send_all(AW_ABORT, t, &ignored), ignored);
    release(i);
    return AW_E_ABORTED;
}

/* AW_SETUP (kernel only): the region, formatted or with the persistent logs loaded. */
static void setup(const struct spu_rpc_header* h) {
    static struct aw_setup_args s;
    static struct aw_header hd, on;
    s.bytes = 0;
    hd.magic = AW_MAGIC;
    hd.slots = AW_SLOTS;
    if (SPU_OS_PROCESS(h->origin)) {
        rpc_send_response(SPU_OS_E_KERNEL_ONLY);
        return;
    }
    aw.left = h->length;
    aw.ready = 0;
    uint32_t r = h->length != sizeof s ? AW_E_ARGS : AW_OK;
    if (!r) r = take(&s, sizeof s);
    hd.slot_bytes = (s.bytes - AW_RECORD_BYTES) / AW_SLOTS & ~(AW_RECORD_BYTES - 1);
    if (!r && ((s.base | s.bytes) & (AW_RECORD_BYTES - 1) || s.bytes < AW_RECORD_BYTES ||
               hd.slot_bytes < AW_RECORD_BYTES + AW_MAX_WRITE || s.spus > 31 || s.node >= s.spus))
        r = AW_E_ARGS;
    aw.base = s.base;
    aw.bytes = s.bytes;
    aw.slot_bytes = hd.slot_bytes;
    aw.node = s.node;
    aw.spus = s.spus;
    for (unsigned i = 0; i < AW_SLOTS && !r; ++i) {
        tx[i].r.state = AW_FREE;
        if (s.format) {
            r = nvm_write(slot_addr(i), &tx[i].r.state, 4);
            continue;
        }
        r = nvm_read(slot_addr(i), &tx[i].r, sizeof tx[i].r);
        if (r || tx[i].r.state < AW_PREPARED) {
            tx[i].r.state = AW_FREE;
            continue;
        }
        if (tx[i].r.state > AW_COMMITTED || tx[i].r.entries > AW_MAX_ENTRIES) r = AW_E_STATE;
        if (!r)
            r = nvm_read(slot_addr(i) + sizeof tx[i].r, tx[i].e,
                         tx[i].r.entries * sizeof(struct aw_entry));
    }
    if (!r && s.format) r = nvm_write(aw.base, &hd, sizeof hd);
    if (!r && !s.format) {
        r = nvm_read(aw.base, &on, sizeof on);
        if (!r && (on.magic != hd.magic || on.slots != hd.slots || on.slot_bytes != hd.slot_bytes))
            r = AW_E_STATE;
    }
    aw.ready = !r;
    rpc_send_response(r);
}

static void logwrite(const struct spu_rpc_header* h) {
    uint32_t r = begin(h);
    if (!r) r = log_write(h->origin);
    if (!r && aw.left) r = AW_E_ARGS;
    rpc_send_response(r);
}

static void vectorlogwrite(const struct spu_rpc_header* h) {
    struct aw_vector_args v;
    uint32_t r = begin(h);
    if (!r) r = take(&v, sizeof v);
    for (uint32_t k = 0; !r && k < v.count; ++k) r = log_write(h->origin);
    if (!r && aw.left) r = AW_E_ARGS;
    rpc_send_response(r);
}

static void commit_handler(const struct spu_rpc_header* h) {
    struct aw_commit_args c;
    uint32_t r = begin(h);
    if (!r) r = take(&c, sizeof c);
    if (!r && aw.left) r = AW_E_ARGS;
    if (!r) r = commit(h->origin, &c);
    rpc_send_response(r);
}

static void logwritecommit(const struct spu_rpc_header* h) {
    struct aw_commit_args c;
    uint32_t r = begin(h);
    if (!r) r = take(&c, sizeof c);
    if (!r) r = log_write(h->origin);
    if (!r && aw.left) r = AW_E_ARGS;
    if (!r) r = commit(h->origin, &c);
    rpc_send_response(r);
}

/* The arguments of ABORT, PREPARE and APPLY; the slot index, or -1 with *r set. A peer's
 * request names the transaction's HRE; the host's is its own. A request under this app's id from
 * an SPU is a peer's: SPU-OS lets an app send under its own id only (docs/spu_os.md
 * "Protection"). */
static int tx_slot(const struct spu_rpc_header* h, int from_peer_only, uint32_t* r) {
    struct aw_tx_args a = {0, 0};
    const int from_peer = h->src < aw.spus;
    *r = begin(h);
    if (!*r) *r = take(&a, sizeof a);
    if (!*r && aw.left) *r = AW_E_ARGS;
    if (!*r && from_peer_only && !from_peer) *r = AW_E_PEER;
    const int i = *r ? -1 : find(from_peer ? a.origin : h->origin, a.tx);
    if (!*r && i < 0) *r = AW_E_UNKNOWN;
    /* The host may abort only what is still logging: a prepared log is the coordinator's. */
    if (i >= 0 && !from_peer && tx[i].r.state != AW_ACTIVE) *r = AW_E_STATE;
    return *r ? -1 : i;
}

static void abort_handler(const struct spu_rpc_header* h) {
    uint32_t r;
    const int i = tx_slot(h, 0, &r);
    if (i >= 0 && tx[i].r.state == AW_COMMITTED) r = AW_E_STATE;
    if (!r) r = release(i);
    rpc_send_response(r);
}

static void prepare(const struct spu_rpc_header* h) {
    uint32_t r;
    const int i = tx_slot(h, 1, &r);
    if (!r && tx[i].r.state != AW_ACTIVE) r = AW_E_STATE;
    if (!r) {
        tx[i].r.state = AW_PREPARED;
        tx[i].r.peer = h->src;
        r = persist(i);
    }
    rpc_send_response(r);
}

/* APPLY: an unknown transaction was applied already (this is a retry, or RECOVER's). */
static void apply(const struct spu_rpc_header* h) {
    uint32_t r;
    const int i = tx_slot(h, 1, &r);
    if (r == AW_E_UNKNOWN) r = AW_OK;
    if (i >= 0 && tx[i].r.state != AW_PREPARED) r = AW_E_STATE;
    if (i >= 0 && !r) {
        tx[i].r.peer = 0; /* a participant has no participants of its own */
        r = finish(i);
    }
    rpc_send_response(r);
}

static void recover(const struct spu_rpc_header* h) {
    struct aw_recover_args a = {0};
    uint32_t r = begin(h);
    if (!r && SPU_OS_PROCESS(h->origin)) r = SPU_OS_E_KERNEL_ONLY;
    if (!r) r = take(&a, sizeof a);
    if (!r && (aw.left || a.phase < 1 || a.phase > 2)) r = AW_E_ARGS;
    for (unsigned i = 0; i < AW_SLOTS && !r; ++i) {
        if (a.phase == 1 && tx[i].r.state == AW_COMMITTED) r = finish(i);
        if (a.phase == 2 && tx[i].r.state == AW_PREPARED) r = release(i);
    }
    rpc_send_response(r);
}

SPU_APP(SPU_HANDLERS(setup, logwrite, vectorlogwrite, commit_handler, logwritecommit, abort_handler,
                     prepare, apply, recover));
