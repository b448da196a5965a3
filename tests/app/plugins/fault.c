/* A host program that reads an address its process never mapped: the core faults it there; the
 * line after the load must never print. */
#include <canopy/host_program.h>

CANOPY_HOST_PROGRAM_ABI();

int canopy_host_main(const canopy_host_api* api, canopy_host* core, int argc,
                     const char* const* argv) {
    (void)argc;
    (void)argv;
    uint64_t v = 0;
    api->print(core, "before the fault");
    api->load(core, 0x7000000000ull, &v, 8);
    api->print(core, "unreachable");
    return 0;
}
