/* Canopy's host program interface: a host program built outside Canopy, as a shared library,
 * that `canopy run --host-program CORE=PATH.so[:SYMBOL]` loads with dlopen and runs as a
 * simulated thread on host core CORE, beside everything else the platform runs.
 *
 * The program sees the core as Canopy's own host programs do (models/host/host_core.hpp): loads,
 * stores and atomics of virtual addresses through the core's MMU and caches (their latency is
 * simulated), device memory mapped from a BAR (uncached, over the PCIe link), compute time, and
 * the host kernel's services. The interface is C, so that the library can be built by any
 * compiler against this header alone, and stable: a Canopy whose CANOPY_HOST_ABI_VERSION differs
 * from the one the library was built with refuses to load it. Version 1.
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

#define CANOPY_HOST_ABI_VERSION 1u

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
