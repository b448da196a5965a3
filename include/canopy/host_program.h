/* Canopy's host program interface: a host program built outside Canopy, as a shared library,
 * that `canopy run --host-program CORE=PATH.so[:SYMBOL]` loads with dlopen and runs as a
 * simulated thread on host core CORE, beside everything else the platform runs.
 *
 * The program sees the core as Canopy's own host programs do (models/host/host_core.hpp): loads,
 * stores and atomics of virtual addresses through the core's MMU and caches (their latency is
 * simulated), device memory mapped from a BAR (uncached, over the PCIe link), compute time, and
 * the host kernel's services. The interface is C, so that the library can be built by any
 * compiler against this header alone, and stable: a Canopy whose CANOPY_HOST_ABI_VERSION differs
 * newer than the one the library was built with refuses to load it; a newer Canopy runs a library
 * built against an older version (the table only grows at its end). Version 2: version 1 and the
 * Willow SSD's functions (ssd_*).
 *
 * A program:
 *
 *     #include <canopy/host_program.h>
 *     CANOPY_HOST_PROGRAM_ABI();
 *     int canopy_host_main(const canopy_host_api* api, canopy_host* core, int argc,
 *                          const char* const* argv) {
 *         uint64_t buf = api->mmap(core, 4096, 4096);
 *         api->store(core, buf, "hello", 5);
 *         api->print(core, "stored");
 *         return 0;  // the program's exit code: 0 succeeded
 *     }
 *
 * argv[0] is the library's path, then each --host-arg. A fault (an unmapped address, a bad size
 * or alignment, a device's bus error) ends the program inside the call that faulted, which does
 * not return: the core reports it and the rest of the platform runs on. (The fault unwinds the
 * program's frames: C built with unwind tables, GCC's and Clang's default on x86-64 Linux.) */
#ifndef CANOPY_HOST_PROGRAM_H
#define CANOPY_HOST_PROGRAM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CANOPY_HOST_ABI_VERSION 2u

/* The core a program runs on (opaque). */
typedef struct canopy_host canopy_host;

typedef struct canopy_host_api {
    uint32_t abi_version; /* CANOPY_HOST_ABI_VERSION of the Canopy that runs the program */
    uint32_t size;        /* sizeof(canopy_host_api) there; later versions only append */

    /* Memory of the program's process: 1..64 bytes, may cross lines and pages. */
    void (*load)(canopy_host* core, uint64_t va, void* bytes, unsigned length);
    void (*store)(canopy_host* core, uint64_t va, const void* bytes, unsigned length);
    /* Atomics on 1, 2, 4 or 8 naturally aligned bytes of normal memory; the old value. */
    uint64_t (*compare_and_swap)(canopy_host* core, uint64_t va, uint64_t expected,
                                 uint64_t desired, uint8_t size);
    uint64_t (*swap)(canopy_host* core, uint64_t va, uint64_t value, uint8_t size);
    uint64_t (*fetch_add)(canopy_host* core, uint64_t va, uint64_t value, uint8_t size);

    /* Time: work the core does, and the core's clock (simulated ns since the start). */
    void (*compute_ns)(canopy_host* core, double ns);
    void (*compute_cycles)(canopy_host* core, uint64_t cycles);
    double (*now_ns)(canopy_host* core);

    /* The host kernel: anonymous memory (page_bytes 4096 or 2 MiB), pinning, the physical
     * address of a pinned page (for a DMA engine), a device's physical range mapped uncached. */
    uint64_t (*mmap)(canopy_host* core, uint64_t bytes, uint64_t page_bytes);
    void (*munmap)(canopy_host* core, uint64_t va, uint64_t bytes);
    void (*pin)(canopy_host* core, uint64_t va, uint64_t bytes);
    uint64_t (*physical)(canopy_host* core, uint64_t va);
    uint64_t (*map_device)(canopy_host* core, uint64_t pa, uint64_t bytes);

    /* A line on canopy's output, "host.coreN: line" (and in OUT/console/host.coreN.log). */
    void (*print)(canopy_host* core, const char* line);
    /* N of host.coreN. */
    unsigned (*core_index)(canopy_host* core);
    /* The value of a configuration key as `canopy config --dump` shows it ("device.bar0_address"
     * gives the device's BAR0), NULL for a key that does not exist. */
    const char* (*config)(canopy_host* core, const char* key);

    /* --- Version 2: the Willow SSD (scenario.willow), through the HRE library --------------
     * RPCs to SSD Apps on the SPUs through an HRE of the program's own process (Willow Section
     * 3.1; Canopy's sw/host/hre.hpp): OS bypass, no system call per RPC. The first ssd_ call
     * waits until the host kernel has installed the apps, and, when apps from outside are
     * installed (`canopy run --app NAME=PATH.elf`), the kernel grants the process their region of
     * every SPU's store (ssd_region). Without the Willow scenario ssd_spus returns 0 and the
     * others fault. A bad argument (an SPU, app or handler out of range, a payload over 32 KiB)
     * is a fault. */
    /* The SSD's SPUs (RPCs go to SPU 0 .. ssd_spus() - 1), 0 without the Willow scenario. */
    unsigned (*ssd_spus)(canopy_host* core);
    /* The app id the kernel gave the SSD App `name`: one of --app, or a built-in ("base-io",
     * "direct-io", "flash-cosmos", "key-value", "atomic-writes", "caching"); 0: not installed. */
    uint32_t (*ssd_app)(canopy_host* core, const char* name);
    /* The store region the process may read and write on SPU `spu` (its apps' NVM calls are
     * checked against it): its first NVM address and its length; length 0 without apps from
     * outside. */
    void (*ssd_region)(canopy_host* core, unsigned spu, uint32_t* base, uint32_t* length);
    /* Sends a request to handler `handler` (0..15) of app `app` on SPU `spu` with `length` bytes
     * of payload; returns its tag for ssd_wait. */
    uint32_t (*ssd_send)(canopy_host* core, unsigned spu, uint32_t app, uint32_t handler,
                         const void* payload, uint32_t length);
    /* Waits for the response to `tag`: the app's result in *result; returns 0, or the bridge's
     * nonzero status when the request failed on the way (HRE_STATUS_*: no such node, ...). */
    uint32_t (*ssd_wait)(canopy_host* core, uint32_t tag, uint32_t* result);
    /* ssd_send then ssd_wait. */
    uint32_t (*ssd_call)(canopy_host* core, unsigned spu, uint32_t app, uint32_t handler,
                         const void* payload, uint32_t length, uint32_t* result);
} canopy_host_api;

/* The entry canopy calls (the default symbol; PATH.so:SYMBOL names another of this type). */
typedef int (*canopy_host_main_fn)(const canopy_host_api* api, canopy_host* core, int argc,
                                   const char* const* argv);

/* Every program says which interface it was built against; canopy checks it before running.
 * (In C++, define the entry extern "C" as well.) */
#ifdef __cplusplus
#define CANOPY_HOST_LINKAGE extern "C"
#else
#define CANOPY_HOST_LINKAGE
#endif
#define CANOPY_HOST_PROGRAM_ABI()                                                                \
    CANOPY_HOST_LINKAGE __attribute__((visibility("default"))) const uint32_t                   \
        canopy_host_abi_version = CANOPY_HOST_ABI_VERSION

#ifdef __cplusplus
}
#endif

#endif /* CANOPY_HOST_PROGRAM_H */
