/* count_client: a host program built outside Canopy against canopy/host_program.h, loaded by
 * `canopy run --host-program CORE=libcount_client.so`. It uses the count_records SSD App
 * (../count_records, installed with --app) and the ring's CRC unit (../crc_accelerator, loaded
 * with --model): on every SPU it stores records in the store region the kernel granted its
 * process, asks the app how many have a key and for the CRC-32 of the records (which the app has
 * the CRC unit compute), and checks both against its own; and that the app cannot read past the
 * region for it (SPU-OS refuses the NVM read: protection holds). Arguments: records per SPU
 * (default 256, at most 2048), the key to count (default 3). Exit code 0 when every answer is
 * right. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <canopy/host_program.h>

#include "count_records_abi.h"
#include "spu_os_abi.h"

CANOPY_HOST_PROGRAM_ABI();

#define MAX_RECORDS 2048u
#define STORE_RECORDS 256u /* per CR_STORE request: 4 KiB of records */
#define KEYS 8u

static struct record records[MAX_RECORDS];

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32). */
static uint32_t crc32_of(const void* p, uint32_t n) {
    const uint8_t* b = (const uint8_t*)p;
    uint32_t c = 0xFFFFFFFFu;
    for (uint32_t i = 0; i < n; ++i) {
        c ^= b[i];
        for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

int canopy_host_main(const canopy_host_api* api, canopy_host* core, int argc,
                     const char* const* argv) {
    char line[200];
    const uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 256;
    const uint32_t key = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 3;
    if (api->size < sizeof(canopy_host_api) || api->ssd_spus(core) == 0) {
        api->print(core, "needs a Canopy with the Willow SSD (host program ABI 2)");
        return 2;
    }
    if (n == 0 || n > MAX_RECORDS) {
        api->print(core, "records per SPU: 1 to 2048");
        return 2;
    }
    const unsigned spus = api->ssd_spus(core);
    const uint32_t app = api->ssd_app(core, "count_records");
    if (app == 0) {
        api->print(core, "the count_records app is not installed (--app count_records=...)");
        return 1;
    }
    /* The CRC unit's ring node: model.crc.node, or (0) the first after the SPUs and the bridge. */
    const char* node_text = api->config(core, "model.crc.node");
    if (!node_text) {
        api->print(core, "no CRC unit (--model libcrc_accelerator.so)");
        return 1;
    }
    uint32_t crc_node = (uint32_t)strtoul(node_text, NULL, 10);
    if (crc_node == 0) crc_node = spus + 1;

    int wrong = 0;
    for (unsigned spu = 0; spu < spus; ++spu) {
        uint32_t base = 0, length = 0;
        api->ssd_region(core, spu, &base, &length);
        if (length < n * sizeof(struct record)) {
            api->print(core, "the store region is too small");
            return 1;
        }
        uint32_t want = 0;
        for (uint32_t i = 0; i < n; ++i) {
            const uint32_t h = (i + 1) * 2654435761u ^ (spu * 40503u);
            records[i] = (struct record){(h >> 13) % KEYS, h, i, spu};
            want += records[i].key == key;
        }
        for (uint32_t at = 0; at < n; at += STORE_RECORDS) {
            static uint8_t payload[sizeof(struct cr_store) + STORE_RECORDS * sizeof(struct record)];
            const uint32_t k = n - at < STORE_RECORDS ? n - at : STORE_RECORDS;
            const struct cr_store s = {base + at * (uint32_t)sizeof(struct record)};
            memcpy(payload, &s, sizeof s);
            memcpy(payload + sizeof s, &records[at], k * sizeof(struct record));
            uint32_t result = 0;
            const uint32_t status =
                api->ssd_call(core, spu, app, CR_STORE, payload,
                              (uint32_t)(sizeof s + k * sizeof(struct record)), &result);
            if (status != 0 || result != 0) {
                snprintf(line, sizeof line, "SPU %u: CR_STORE failed (status %u, result 0x%x)", spu,
                         status, result);
                api->print(core, line);
                return 1;
            }
        }
        const struct cr_count c = {base, n, key};
        uint32_t count = 0;
        const double t0 = api->now_ns(core);
        api->ssd_call(core, spu, app, CR_COUNT, &c, sizeof c, &count);
        const double count_ns = api->now_ns(core) - t0;
        const uint32_t bytes = n * (uint32_t)sizeof(struct record);
        const struct cr_checksum k = {base, bytes, crc_node};
        uint32_t crc = 0;
        api->ssd_call(core, spu, app, CR_CHECKSUM, &k, sizeof k, &crc);
        const uint32_t want_crc = crc32_of(records, bytes);
        /* One record just past the region: not this process's to read. */
        const struct cr_count past = {base + length, 1, key};
        uint32_t refused = 0;
        api->ssd_call(core, spu, app, CR_COUNT, &past, sizeof past, &refused);
        const int right =
            count == want && crc == want_crc && refused == (CR_ERROR | SPU_OS_E_PERMISSION);
        wrong += !right;
        snprintf(line, sizeof line,
                 "SPU %u: %u records, key %u in %u (app: %u, %.1f us), CRC-32 %08x (CRC unit: "
                 "%08x), past the region: 0x%x; %s",
                 spu, n, key, want, count, count_ns / 1000.0, want_crc, crc, refused,
                 right ? "right" : "WRONG");
        api->print(core, line);
    }
    snprintf(line, sizeof line, "%u SPUs, %d wrong", spus, wrong);
    api->print(core, line);
    return wrong ? 1 : 0;
}
