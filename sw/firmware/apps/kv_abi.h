/* The RPCs of the Key-Value SSD App (Willow Section 4.5; apps/kv.c; host library sw/host/kv_store):
 * PUT inserts or replaces a pair, GET returns the value of a key, DELETE removes a pair. The host
 * computes a 64-bit hash of the key, which picks the SPU (hash % spus) and the bucket on it
 * ((hash / spus) % buckets); GET and DELETE pass the hash and the key, PUT the hash, the key and
 * the value. Each SPU keeps its buckets in a region of its store that the host kernel gives the
 * app (KV_SETUP, kernel only): a header, the bucket table, then the records, each bucket a chain
 * (open hashing) of records with the full hash beside the key. The SPU walks a chain with one
 * NVM read per record (its header and key together) and moves the value by DMA straight between
 * the store and the network interface. Plain C with fixed-width fields, included by the rv32 app
 * and the host library. */
#ifndef CANOPY_KV_ABI_H
#define CANOPY_KV_ABI_H

#include <stdint.h>

/* Handlers (RPC ID = app << 8 | handler). */
#define KV_SETUP 0  /* struct kv_setup_args: the region (kernel HREs only) */
#define KV_PUT 1    /* struct kv_key_args + key + value -> KV_OK */
#define KV_GET 2    /* struct kv_key_args + key -> DATA (struct kv_data + value), then KV_OK */
#define KV_DELETE 3 /* struct kv_key_args + key -> KV_OK or KV_E_NOT_FOUND */
#define KV_DATA 0x80

#define KV_MAX_KEY 64u
#define KV_MAX_VALUE 8192u
#define KV_MAGIC 0x4b565354u /* "KVST" */

struct kv_setup_args {
    uint32_t base, bytes; /* the region: NVM addresses of this SPU */
    uint32_t buckets;
    uint32_t format; /* 1: start empty; 0: keep what the region holds (after a reboot) */
};
struct kv_key_args {
    uint32_t hash_lo, hash_hi;
    uint32_t bucket;
    uint16_t key_bytes, value_bytes; /* value_bytes: PUT only */
    uint32_t cookie;                 /* GET: names the DATA request */
};
struct kv_data {
    uint32_t cookie, value_bytes;
};

/* In the store: the header at the region's start, then buckets x 4 B heads, then records. */
struct kv_header {
    uint32_t magic, buckets, heap, end; /* heap: the next free byte (region offset) */
};
struct kv_record {
    uint32_t next; /* region offset of the next record in the chain; 0: the last */
    uint32_t hash_lo, hash_hi;
    uint16_t key_bytes, value_bytes;
    /* key, then value, then padding to 4 bytes */
};

#define KV_OK 0u
#define KV_E_ARGS 0x400u      /* malformed request, or a key or value too long */
#define KV_E_NOT_FOUND 0x401u /* GET, DELETE: no such key */
#define KV_E_FULL 0x402u      /* PUT: the region has no room */
#define KV_E_STATE 0x403u     /* not set up, or the region holds no store */

#endif
