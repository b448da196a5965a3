/* The kernel app (app 0): the trusted RPCs the host's Willow driver uses to manage an SPU
 * (Willow Section 3.1 "Building an SSD App": the kernel driver installs an app's RPC handlers on
 * every SPU; "Non-volatile storage protection": it installs permission entries with privileged
 * RPCs; "Limiting access to RPCs": kernel-only RPCs come from HREs whose high bits are zero). The
 * driver installs an app's image in pieces into a slot the host kernel allocated (INSTALL_CODE,
 * INSTALL_DATA), then ACTIVATE checks the slot's entry table and binds the app id to it. */
#include <string.h>

#include "nvm.h"
#include "perm.h"
#include "spu_os.h"

#define CHUNK_WORDS 64

static uint32_t buf[CHUNK_WORDS];

/* The next n payload bytes (n <= sizeof buf) into buf. */
static int receive(uint32_t n) {
    return spu_dma(SPU_PORT_NI_RX, 0, SPU_PORT_DMEM, (uint32_t)buf, n) == 0;
}

/* Payloads of `words` words, or of a whole number of records of that many words. */
static int payload_is(uint32_t words, int repeated) {
    const uint32_t n = spu_os_rpc->h.length, rec = words * 4;
    return repeated ? (n > 0 && n % rec == 0) : n == rec;
}

static uint32_t install(int code) {
    const uint32_t len = spu_os_rpc->h.length;
    if (len < 8 || !receive(8)) return SPU_OS_E_BAD_ARG;
    const uint32_t slot = buf[0], offset = buf[1], n = len - 8;
    const uint32_t size = code ? SPU_OS_CODE_SLOT_SIZE : SPU_OS_DATA_SLOT_SIZE;
    if (slot >= SPU_OS_SLOTS || offset > size || n > size - offset) return SPU_OS_E_BAD_ARG;
    if (spu_os_slots[slot].state != SLOT_FREE) return SPU_OS_E_STATE;
    if (!code) /* the DMA reaches DMEM directly */
        return n == 0 || spu_dma(SPU_PORT_NI_RX, 0, SPU_PORT_DMEM, slot_data_base(slot) + offset,
                                 n) == 0
                   ? SPU_OS_OK
                   : SPU_OS_E_DMA;
    /* The DMA does not reach IMEM: bounce through buf, then machine-mode word stores. */
    if ((offset | n) & 3) return SPU_OS_E_BAD_ARG;
    volatile uint32_t* dst = (volatile uint32_t*)(slot_code_base(slot) + offset);
    for (uint32_t done = 0; done < n;) {
        const uint32_t piece = n - done < sizeof buf ? n - done : sizeof buf;
        if (!receive(piece)) return SPU_OS_E_DMA;
        for (uint32_t i = 0; i < piece / 4; ++i) *dst++ = buf[i];
        done += piece;
    }
    /* fence.i (Zifencei, which -march leaves out: encoded by hand) drops stale decodes. */
    __asm__ volatile(".insn i 0x0f, 1, x0, x0, 0" ::: "memory");
    return SPU_OS_OK;
}

/* An entry point inside the slot, on an instruction boundary: any halfword when the core has the
 * C extension (misa bit 2), else a word. */
static int in_code_slot(uint32_t addr, unsigned slot) {
    uint32_t misa;
    __asm__("csrr %0, misa" : "=r"(misa));
    return (addr & (misa & 4 ? 1u : 3u)) == 0 &&
           addr - slot_code_base(slot) < SPU_OS_CODE_SLOT_SIZE;
}

static uint32_t activate(void) {
    if (!payload_is(2, 0) || !receive(8)) return SPU_OS_E_BAD_ARG;
    const uint32_t app = buf[0], slot = buf[1];
    if (app == SPU_OS_KERNEL_APP || app > 0xff || slot >= SPU_OS_SLOTS) return SPU_OS_E_BAD_ARG;
    if (spu_os_slots[slot].state != SLOT_FREE || spu_os_find_app(app) >= 0) return SPU_OS_E_STATE;
    struct app_slot* a = &spu_os_slots[slot];
    memcpy(&a->table, (const void*)slot_code_base(slot), sizeof a->table);
    const struct spu_app_table* t = &a->table;
    if (t->magic != SPU_APP_MAGIC || t->n_handlers == 0 || t->n_handlers > SPU_OS_MAX_HANDLERS ||
        t->n_functions > SPU_OS_MAX_HANDLERS || !in_code_slot(t->done_stub, slot))
        return SPU_OS_E_BAD_ARG;
    for (uint32_t i = 0; i < t->n_handlers; ++i)
        if (!in_code_slot(t->handlers[i], slot)) return SPU_OS_E_BAD_ARG;
    for (uint32_t i = 0; i < t->n_functions; ++i)
        if (!in_code_slot(t->functions[i], slot)) return SPU_OS_E_BAD_ARG;
    memset(a->grants, 0, sizeof a->grants);
    a->region_start = a->region_bytes = 0;
    a->app_id = (uint8_t)app;
    a->state = SLOT_ACTIVE;
    return SPU_OS_OK;
}

static uint32_t remove_app(void) {
    if (!payload_is(1, 0) || !receive(4)) return SPU_OS_E_BAD_ARG;
    const int s = spu_os_find_app(buf[0]);
    if (s < 0) return SPU_OS_E_NO_APP;
    spu_os_slots[s].state = SLOT_FREE;
    memset((void*)slot_data_base((unsigned)s), 0, SPU_OS_DATA_SLOT_SIZE);
    /* Nobody may call into the slot's next tenant on this app's grants. */
    for (unsigned i = 0; i < SPU_OS_SLOTS; ++i)
        for (unsigned g = 0; g < CALL_GRANTS; ++g)
            if (spu_os_slots[i].grants[g].callee == buf[0]) spu_os_slots[i].grants[g].callee = 0;
    return SPU_OS_OK;
}

/* Records of `words` words, CHUNK_WORDS / words at a time, each passed to `apply`. */
static uint32_t for_records(uint32_t words, uint32_t (*apply)(const uint32_t* rec)) {
    if (!payload_is(words, 1)) return SPU_OS_E_BAD_ARG;
    const uint32_t per_chunk = CHUNK_WORDS / words;
    uint32_t result = SPU_OS_OK;
    for (uint32_t left = spu_os_rpc->h.length / (words * 4); left > 0;) {
        const uint32_t n = left < per_chunk ? left : per_chunk;
        if (!receive(n * words * 4)) return SPU_OS_E_DMA;
        for (uint32_t i = 0; i < n; ++i) {
            const uint32_t r = apply(buf + i * words);
            if (r != SPU_OS_OK) result = r;
        }
        left -= n;
    }
    return result;
}

static uint32_t add_one(const uint32_t* r) { return perm_add(r[0], r[1], r[2], r[3]); }
static uint32_t remove_one(const uint32_t* r) { return perm_remove(r[0], r[1]); }

static uint32_t stat(void) {
    if (!payload_is(1, 0) || !receive(4)) return SPU_OS_E_BAD_ARG;
    switch (buf[0]) {
        case SPU_OS_STAT_PERM_ENTRIES:
            return perm_entries();
        case SPU_OS_STAT_PERM_EVICTIONS:
            return perm_evictions();
        default: {
            uint32_t v;
            if (nvm_stat(buf[0], &v)) return v;
            return buf[0] < sizeof spu_os_stats / sizeof *spu_os_stats ? spu_os_stats[buf[0]]
                                                                       : SPU_OS_E_BAD_ARG;
        }
    }
}

/* {caller, callee, function mask}: the inter-app call table [Willow 3.1 "Limiting access to
 * RPCs": an SSD App may call another's functions only as the table allows]. Mask 0 revokes. */
static uint32_t call_allow(void) {
    if (!payload_is(3, 0) || !receive(12)) return SPU_OS_E_BAD_ARG;
    const int caller = spu_os_find_app(buf[0]);
    if (caller < 0 || buf[1] == SPU_OS_KERNEL_APP || buf[1] > 0xff) return SPU_OS_E_NO_APP;
    struct app_slot* a = &spu_os_slots[caller];
    unsigned g, spare = CALL_GRANTS;
    for (g = 0; g < CALL_GRANTS && a->grants[g].callee != buf[1]; ++g)
        if (a->grants[g].callee == 0 && spare == CALL_GRANTS) spare = g;
    if (g == CALL_GRANTS) g = spare;
    if (g == CALL_GRANTS) return SPU_OS_E_STATE;
    a->grants[g].callee = buf[2] ? (uint8_t)buf[1] : 0;
    a->grants[g].functions = buf[2];
    return SPU_OS_OK;
}

/* {app, start, length}: the store region the app reaches on its own authority, whoever it serves
 * (length 0: none). Not checked against the store: every transfer still is (`in_store`). */
static uint32_t app_region(void) {
    if (!payload_is(3, 0) || !receive(12)) return SPU_OS_E_BAD_ARG;
    const int s = spu_os_find_app(buf[0]);
    if (s < 0) return SPU_OS_E_NO_APP;
    if (buf[2] > UINT32_MAX - buf[1]) return SPU_OS_E_BAD_ARG;
    spu_os_slots[s].region_start = buf[1];
    spu_os_slots[s].region_bytes = buf[2];
    return SPU_OS_OK;
}

uint32_t spu_os_kernel_rpc(unsigned handler) {
    if (handler == SPU_OS_RPC_PING) return SPU_OS_ABI_VERSION;
    /* The kernel's own HRE, through the bridge: not an app acting for it (apps cannot send to
     * app 0 at all: syscall.c). */
    if (SPU_OS_PROCESS(spu_os_rpc->h.origin) != 0 || spu_os_rpc->h.src != spu_bridge_node())
        return SPU_OS_E_KERNEL_ONLY;
    switch (handler) {
        case SPU_OS_RPC_INSTALL_CODE:
            return install(1);
        case SPU_OS_RPC_INSTALL_DATA:
            return install(0);
        case SPU_OS_RPC_ACTIVATE:
            return activate();
        case SPU_OS_RPC_REMOVE:
            return remove_app();
        case SPU_OS_RPC_PERM_ADD:
            return for_records(4, add_one);
        case SPU_OS_RPC_PERM_REMOVE:
            return for_records(2, remove_one);
        case SPU_OS_RPC_STAT:
            return stat();
        case SPU_OS_RPC_CALL_ALLOW:
            return call_allow();
        case SPU_OS_RPC_STORE_ATTACH:
            return nvm_attach();
        case SPU_OS_RPC_STORE_FLUSH:
            return nvm_flush(0, 0);
        case SPU_OS_RPC_APP_REGION:
            return app_region();
        default:
            return SPU_OS_E_NO_HANDLER;
    }
}
