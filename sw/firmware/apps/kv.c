/* The Key-Value SSD App (Willow Section 4.5; RPCs and store layout in kv_abi.h): a hash table
 * with chaining in a region of the SPU's store. A lookup reads the bucket's head, then one
 * record header with its key per step of the chain; values move between the store and the
 * network interface by DMA, never through DMEM. PUT writes a new record at the heap's end and
 * links it at the chain's head (a value of the same size is overwritten in place); DELETE
 * unlinks. Space of replaced and deleted records is not reused (the heap only grows; KV_E_FULL
 * when it meets the region's end). SPU-OS checks every store access against the calling
 * process's permissions, so a process reaches the table only where the host kernel granted it.
 * One handler at a time changes a chain: handlers run to completion except GET, which waits
 * for the host's answer to its DATA only after its last store access. */
#include <stddef.h>

#include "kv_abi.h"
#include "spu_app.h"

static struct { uint32_t base, bytes, buckets, heap, ready; } kv;
static struct kv_key_args a;
static uint8_t key[KV_MAX_KEY];
static struct {
    struct kv_record r;
    uint8_t key[KV_MAX_KEY];
} rec;
static uint32_t zeros[64];

static uint32_t rd(uint32_t off, void* p, uint32_t n) { return nvm_read(kv.base + off, p, n); }
static uint32_t wr(uint32_t off, const void* p, uint32_t n) {
    return nvm_write(kv.base + off, p, n);
}
static uint32_t head_of(uint32_t bucket) { return sizeof(struct kv_header) + 4 * bucket; }
static uint32_t first_record(void) { return head_of(kv.buckets); }
static uint32_t record_bytes(uint32_t key_bytes, uint32_t value_bytes) {
    return (sizeof(struct kv_record) + key_bytes + value_bytes + 3) & ~3u;
}

static int same_key(void) {
    if (rec.r.hash_lo != a.hash_lo || rec.r.hash_hi != a.hash_hi || rec.r.key_bytes != a.key_bytes)
        return 0;
    for (unsigned i = 0; i < a.key_bytes; ++i)
        if (rec.key[i] != key[i]) return 0;
    return 1;
}

/* The key's record: *at its offset (0: none; rec holds its header), *link the offset of the word
 * that points at it (the bucket's head or the previous record's `next`). */
static uint32_t find(uint32_t* at, uint32_t* link) {
    uint32_t off;
    *at = 0;
    *link = head_of(a.bucket);
    uint32_t r = rd(*link, &off, 4);
    while (!r && off) {
        if (off < first_record() || off >= kv.heap || (off & 3)) return KV_E_STATE; /* corrupt */
        uint32_t n = sizeof rec.r + a.key_bytes; /* its header and as much key as ours */
        if (n > kv.heap - off) n = kv.heap - off;
        r = rd(off, &rec, n);
        if (!r && same_key()) {
            *at = off;
            return KV_OK;
        }
        *link = off; /* `next` is the record's first word */
        off = rec.r.next;
    }
    return r;
}

/* The request's arguments and key; KV_OK or why not. */
static uint32_t arguments(const struct spu_rpc_header* h, int with_value) {
    if (!kv.ready) return KV_E_STATE;
    if (h->length < sizeof a) return KV_E_ARGS;
    uint32_t r = rpc_receive_bytes(&a, sizeof a);
    if (!with_value) a.value_bytes = 0;
    if (!r && (a.key_bytes == 0 || a.key_bytes > KV_MAX_KEY || a.value_bytes > KV_MAX_VALUE ||
               a.bucket >= kv.buckets || h->length != sizeof a + a.key_bytes + a.value_bytes))
        r = KV_E_ARGS;
    if (!r) r = rpc_receive_bytes(key, a.key_bytes);
    return r;
}

/* KV_SETUP (kernel only): the region, formatted or taken as it is. */
static void setup(const struct spu_rpc_header* h) {
    struct kv_setup_args s = {0, 0, 0, 0};
    struct kv_header hd = {0, 0, 0, 0};
    if (SPU_OS_PROCESS(h->origin)) { /* and the table stays as it is */
        rpc_send_response(SPU_OS_E_KERNEL_ONLY);
        return;
    }
    uint32_t r = h->length != sizeof s ? KV_E_ARGS : KV_OK;
    if (!r) r = rpc_receive_bytes(&s, sizeof s);
    if (!r && (s.buckets == 0 || (s.base & 3) || s.bytes / 4 <= s.buckets + 8)) r = KV_E_ARGS;
    kv.ready = 0;
    kv.base = s.base;
    kv.bytes = s.bytes;
    kv.buckets = s.buckets;
    if (!r && s.format) {
        for (uint32_t off = sizeof hd; !r && off < first_record(); off += sizeof zeros) {
            const uint32_t n = first_record() - off;
            r = wr(off, zeros, n < sizeof zeros ? n : sizeof zeros);
        }
        hd.magic = KV_MAGIC;
        hd.buckets = s.buckets;
        hd.heap = first_record();
        hd.end = s.bytes;
        if (!r) r = wr(0, &hd, sizeof hd);
    } else if (!r) {
        r = rd(0, &hd, sizeof hd);
        if (!r && (hd.magic != KV_MAGIC || hd.buckets != s.buckets || hd.end != s.bytes ||
                   hd.heap < first_record() || hd.heap > s.bytes))
            r = KV_E_STATE;
    }
    kv.heap = hd.heap;
    kv.ready = !r;
    rpc_send_response(r);
}

/* KV_PUT: a new record at the heap's end replaces the old one (if any) in the chain; a value of
 * the old size is overwritten in place instead. */
static void put(const struct spu_rpc_header* h) {
    uint32_t at, link, head, r = arguments(h, 1);
    if (!r) r = find(&at, &link);
    if (!r && at && rec.r.value_bytes == a.value_bytes) {
        r = rpc_receive_to_nvm(kv.base + at + sizeof rec.r + a.key_bytes, a.value_bytes);
        rpc_send_response(r);
        return;
    }
    const uint32_t off = kv.heap, size = record_bytes(a.key_bytes, a.value_bytes);
    if (!r && size > kv.bytes - kv.heap) r = KV_E_FULL;
    if (!r) r = rd(head_of(a.bucket), &head, 4);
    if (!r) {
        /* The old record, if it is the head, is replaced there; elsewhere it is unlinked. */
        const uint32_t old_next = rec.r.next; /* the old record's successor */
        rec.r.next = at && link == head_of(a.bucket) ? old_next : head;
        rec.r.hash_lo = a.hash_lo;
        rec.r.hash_hi = a.hash_hi;
        rec.r.key_bytes = a.key_bytes;
        rec.r.value_bytes = a.value_bytes;
        for (unsigned i = 0; i < a.key_bytes; ++i) rec.key[i] = key[i];
        r = wr(off, &rec, sizeof rec.r + a.key_bytes);
        if (!r && a.value_bytes)
            r = rpc_receive_to_nvm(kv.base + off + sizeof rec.r + a.key_bytes, a.value_bytes);
        kv.heap = off + size;
        if (!r) r = wr(offsetof(struct kv_header, heap), &kv.heap, 4);
        if (!r && at && link != head_of(a.bucket)) r = wr(link, &old_next, 4);
        if (!r) r = wr(head_of(a.bucket), &off, 4);
    }
    rpc_send_response(r);
}

/* KV_GET: the value in a DATA request to the originating HRE (as block_io's READ), then KV_OK
 * once the host holds it. */
static void get(const struct spu_rpc_header* h) {
    uint32_t at, link, r = arguments(h, 0);
    if (!r) r = find(&at, &link);
    if (!r && !at) r = KV_E_NOT_FOUND;
    if (!r) {
        const struct kv_data d = {a.cookie, rec.r.value_bytes};
        r = rpc_start_request(h->src, h->origin, SPU_OS_RPC_ID(h->rpc_id >> 8, KV_DATA),
                              sizeof d + d.value_bytes);
        if (!r) r = rpc_append_request(&d, sizeof d);
        if (!r && d.value_bytes)
            r = nvm_to_request(kv.base + at + sizeof rec.r + a.key_bytes, d.value_bytes);
        if (!r) r = rpc_finish_request();
        if (!r) r = rpc_wait_response();
    }
    rpc_send_response(r);
}

/* KV_DELETE: the record leaves its chain. */
static void del(const struct spu_rpc_header* h) {
    uint32_t at, link, r = arguments(h, 0);
    if (!r) r = find(&at, &link);
    if (!r && !at) r = KV_E_NOT_FOUND;
    if (!r) r = wr(link, &rec.r.next, 4);
    rpc_send_response(r);
}

SPU_APP(SPU_HANDLERS(setup, put, get, del));
