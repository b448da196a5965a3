/* SPU-OS: boot and RPC dispatch (Willow Section 3.1 "SPU architecture", "RPC interface",
 * "Tracking responsibility", "Limiting access to RPCs"). Every SPU boots the same image, sleeps
 * until its network interface holds a request, then reads the header, propagates the request's
 * originating HRE to the requests it will send, and either serves it itself (app 0, the kernel
 * RPCs) or runs the SSD App's handler in user mode confined to the app's segments. Every request
 * gets exactly one response: the handler's, or SPU-OS's error result when there was none. */
#include <string.h>

#include "perm.h"
#include "spu.h"
#include "spu_os.h"

struct app_slot spu_os_slots[SPU_OS_SLOTS];
uint32_t spu_os_stats[SPU_OS_STATS];

#define MAX_NOTICES 4

static struct {
    unsigned handler;
    uint32_t bytes;
    uint32_t words[8];
} notices[MAX_NOTICES];
static unsigned n_notices;
static unsigned tag_counter;

unsigned spu_os_next_tag(void) { return ++tag_counter & 0xffffu; }

int spu_os_find_app(unsigned app_id) {
    for (unsigned s = 0; s < SPU_OS_SLOTS; ++s)
        if (spu_os_slots[s].state != SLOT_FREE && spu_os_slots[s].app_id == app_id) return (int)s;
    return -1;
}

uint32_t spu_os_respond(uint32_t result) {
    if (spu_os_rpc->responded) return SPU_OS_E_STATE;
    spu_os_rpc->responded = 1;
    return ni_send_response(spu_os_rpc->h.src, spu_os_rpc->h.tag, result) ? SPU_OS_E_NETWORK
                                                                        : SPU_OS_OK;
}

void spu_os_notice(unsigned handler, const void* words, uint32_t bytes) {
    if (n_notices == MAX_NOTICES || bytes > sizeof notices[0].words) {
        ++spu_os_stats[SPU_OS_STAT_NOTIFY_DROPPED];
        return;
    }
    notices[n_notices].handler = handler;
    notices[n_notices].bytes = bytes;
    memcpy(notices[n_notices].words, words, bytes);
    ++n_notices;
}

void spu_os_send_notices(void) {
    for (unsigned i = 0; i < n_notices; ++i) {
        /* To the host kernel's HRE (0) through the bridge; the response is drained later. */
        if (ni_begin_request(spu_bridge_node(), 0,
                             SPU_OS_RPC_ID(SPU_OS_KERNEL_APP, notices[i].handler),
                             spu_os_next_tag(), notices[i].bytes) != 0 ||
            spu_dma(SPU_PORT_DMEM, (uint32_t)notices[i].words, SPU_PORT_NI_TX, 0,
                    notices[i].bytes) != 0 ||
            ni_finish_request() != 0) {
            if (ni_request_open()) ni_abort_request();
            ++spu_os_stats[SPU_OS_STAT_NOTIFY_DROPPED];
        }
    }
    n_notices = 0;
}

/* Responses: a suspended handler's, or the kernel's acks of notices (dropped). */
static void route_responses(void) {
    unsigned src, tag;
    uint32_t result;
    while (ni_response_pending()) {
        if (ni_take_response(&src, &tag, &result)) result = SPU_OS_E_DROPPED;
        spu_os_route_response(tag, result);
    }
}

/* After a handler ran: one response per request, nothing left open, the request popped. */
static void after_handler(enum run_outcome outcome) {
    /* A request the handler left open would block every later one. */
    if (ni_request_open()) ni_abort_request();
    if (outcome != RUN_SUSPENDED) {
        spu_os_respond(outcome == RUN_FAULT  ? SPU_OS_E_APP_FAULT
                       : outcome == RUN_GONE ? SPU_OS_E_DISABLED
                                             : SPU_OS_E_NO_RESPONSE);
        if (!spu_os_rpc->popped) ni_pop_request();
    }
    spu_os_send_notices();
}

/* Serves the head request; 0 when it must wait (every lane of its app is held by a suspended
 * handler) and stays where it is. */
static int dispatch(void) {
    struct rpc_state* r = spu_os_rpc;
    r->dispatch_cycle = read_mcycle();
    ni_request_header(&r->h);
    r->responded = r->popped = r->awaiting = 0;
    /* Requests this one causes carry its originating HRE [Willow 3.1 "Tracking
     * responsibility"]. */
    ni_set_origin(r->h.origin);
    const unsigned app = r->h.rpc_id >> 8, handler = r->h.rpc_id & 0xffu;
    const int s = app == SPU_OS_KERNEL_APP ? -1 : spu_os_find_app(app);
    if (app == SPU_OS_KERNEL_APP) {
        spu_os_respond(spu_os_kernel_rpc(handler));
    } else if (s < 0) {
        spu_os_respond(SPU_OS_E_NO_APP);
    } else if (spu_os_slots[s].state == SLOT_DISABLED) {
        spu_os_respond(SPU_OS_E_DISABLED);
    } else if (handler >= spu_os_slots[s].table.n_handlers) {
        spu_os_respond(SPU_OS_E_NO_HANDLER);
    } else {
        const int lane = spu_os_free_lane((unsigned)s, -1);
        if (lane < 0) return 0;
        ++spu_os_stats[SPU_OS_STAT_DISPATCHED];
        after_handler(spu_os_run_handler((unsigned)s, (unsigned)lane, handler));
        return 1;
    }
    ni_pop_request();
    spu_os_send_notices();
    return 1;
}

int main(void) {
    __asm__ volatile("csrw mtvec, %0" ::"r"(spu_os_trap_entry));
    __asm__ volatile("csrw mscratch, zero");
    perm_init();
    /* Data slots start zeroed, so an app's .bss needs no image. */
    memset((void*)SPU_OS_DATA_SLOT_BASE, 0, SPU_OS_SLOTS * SPU_OS_DATA_SLOT_SIZE);
    spu_write("spu-os ");
    spu_write_uint(SPU_OS_ABI_VERSION, 10, 1);
    spu_write(": node ");
    spu_write_uint(spu_node(), 10, 1);
    spu_write(" of ");
    spu_write_uint(spu_count(), 10, 1);
    spu_write(", ");
    spu_write_uint(SPU_OS_SLOTS, 10, 1);
    spu_write(" app slots\n");
    for (;;) {
        route_responses();
        const uint64_t deadline = spu_os_expire_threads();
        /* Handlers whose response came go first: they hold lanes and requests wait for them. */
        const int t = spu_os_ready_thread();
        if (t >= 0) {
            after_handler(spu_os_resume(t));
            continue;
        }
        int blocked = 0;
        if (ni_request_pending()) {
            if (dispatch()) continue;
            blocked = 1;
        }
        /* Sleep until a request or response arrives (wfi wakes on MEIP with mstatus.MIE 0);
         * a request that waits for a lane wakes nobody. */
        spu_irq_enable(SPU_CTL_IRQ_ENABLE_NI_RESPONSE_MASK |
                       (blocked ? 0 : SPU_CTL_IRQ_ENABLE_NI_REQUEST_MASK));
        /* ... or until the first suspended handler's wait times out (the timer). */
        if (deadline) spu_set_timer(deadline);
        __asm__ volatile("csrw mie, %0" ::"r"(deadline ? MIE_MEIE | MIE_MTIE : MIE_MEIE));
        if (!ni_response_pending() && (blocked || !ni_request_pending())) __asm__ volatile("wfi");
        __asm__ volatile("csrw mie, zero");
    }
}
