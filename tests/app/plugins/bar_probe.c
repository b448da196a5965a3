/* A host program reaching a model in a window of the device's BAR0 (tests/app/models/
 * bar_registers.cpp): it maps the window uncached, reads the ID register, writes 16 scratch
 * words and reads them back. */
#include <stdio.h>
#include <stdlib.h>

#include <canopy/host_program.h>

CANOPY_HOST_PROGRAM_ABI();

int canopy_host_main(const canopy_host_api* api, canopy_host* core, int argc,
                     const char* const* argv) {
    (void)argc, (void)argv;
    const char* bar0 = api->config(core, "device.bar0_address");
    const char* offset = api->config(core, "model.scratch.bar_offset");
    if (!bar0 || !offset) return 2;
    const uint64_t pa = strtoull(bar0, NULL, 0) + strtoull(offset, NULL, 0);
    const uint64_t regs = api->map_device(core, pa, 4096);
    uint32_t id = 0;
    api->load(core, regs, &id, 4);
    int wrong = 0;
    for (uint32_t i = 1; i <= 16; ++i) {
        const uint32_t v = 0x1000u * i + 7;
        api->store(core, regs + 4 * i, &v, 4);
    }
    for (uint32_t i = 1; i <= 16; ++i) {
        uint32_t v = 0;
        api->load(core, regs + 4 * i, &v, 4);
        wrong += v != 0x1000u * i + 7;
    }
    char line[80];
    snprintf(line, sizeof line, "id 0x%08x, 16 words, %d wrong", id, wrong);
    api->print(core, line);
    return wrong;
}
