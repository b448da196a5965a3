/* A host program built outside Canopy against include/canopy/host_program.h, in C: it fills a
 * buffer of argv[1] bytes in its own memory, computes for 1 us, reads the buffer back and checks
 * it, then uses the atomics and the configuration. Exit 0 when everything is as it should be. */
#include <canopy/host_program.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

CANOPY_HOST_PROGRAM_ABI();

int canopy_host_main(const canopy_host_api* api, canopy_host* core, int argc,
                     const char* const* argv) {
    char line[160];
    if (api->abi_version != CANOPY_HOST_ABI_VERSION || api->size < sizeof(canopy_host_api))
        return 10;
    if (argc != 2) return 11;
    const uint64_t bytes = strtoull(argv[1], NULL, 10);
    const uint64_t buf = api->mmap(core, bytes, 4096);
    uint8_t chunk[64];
    for (uint64_t off = 0; off < bytes; off += 64) {
        for (unsigned i = 0; i < 64; ++i) chunk[i] = (uint8_t)(off / 64 * 7 + i);
        api->store(core, buf + off, chunk, 64);
    }
    const double t0 = api->now_ns(core);
    api->compute_ns(core, 1000.0);
    if (api->now_ns(core) < t0 + 1000.0) return 12;
    unsigned wrong = 0;
    for (uint64_t off = 0; off < bytes; off += 64) {
        api->load(core, buf + off, chunk, 64);
        for (unsigned i = 0; i < 64; ++i) wrong += chunk[i] != (uint8_t)(off / 64 * 7 + i);
    }
    snprintf(line, sizeof line, "checked %llu bytes, %u wrong", (unsigned long long)bytes, wrong);
    api->print(core, line);
    /* Atomics on the buffer's first word (0x03020100: bytes 0, 1, 2, 3 of chunk 0). */
    const uint64_t old = api->fetch_add(core, buf, 5, 4);
    const uint64_t cas = api->compare_and_swap(core, buf, old + 5, 42, 4);
    uint32_t now = 0;
    api->load(core, buf, &now, 4);
    if (old != 0x03020100u || cas != old + 5 || now != 42) return 13;
    /* The configuration, as `canopy config --dump` shows it. */
    const char* cores = api->config(core, "host.cores");
    if (!cores || api->config(core, "no.such.key") != NULL) return 14;
    snprintf(line, sizeof line, "on host.core%u of %s", api->core_index(core), cores);
    api->print(core, line);
    return wrong ? 1 : 0;
}
