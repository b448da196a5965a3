/* The permission table (Willow Section 3.1 "Non-volatile storage protection"; 3.2: 768 entries).
 * Each process has a splay tree of its extents keyed by start (top-down splaying, Sleator and
 * Tarjan): a check splays the address, which brings the extent at or just below it to the root,
 * so repeated checks of nearby addresses cost a few steps. Extents of one process should not
 * overlap: an access must lie inside a single extent. Entries come from a fixed pool; the pool's
 * clock hand picks the victim when it is full (an entry used since the hand last passed gets a
 * second chance). Processes are found through a small open-addressed hash of their ids. */
#include "perm.h"

#include <stddef.h>

#include "spu_os_abi.h"

struct perm_node {
    uint32_t start, length;
    struct perm_node *left, *right;
    uint8_t process; /* index into procs */
    uint8_t rights;
    uint8_t ref; /* used since the clock hand last passed */
    uint8_t used;
};

struct perm_process {
    uint32_t id;
    struct perm_node* root;
    uint16_t count;
    uint8_t used;
};

static struct perm_node nodes[PERM_ENTRIES];
static struct perm_process procs[PERM_PROCESSES];
static struct perm_node* free_list; /* linked through `right` */
static uint32_t hand, entries, evictions;

void perm_init(void) {
    free_list = NULL;
    for (int i = PERM_ENTRIES - 1; i >= 0; --i) {
        nodes[i].used = 0;
        nodes[i].right = free_list;
        free_list = &nodes[i];
    }
    for (unsigned i = 0; i < PERM_PROCESSES; ++i) procs[i].used = 0;
    hand = entries = evictions = 0;
}

/* Top-down splay: the node with `key`, or the last one on its search path (its predecessor or
 * successor), becomes the root. */
static struct perm_node* splay(struct perm_node* t, uint32_t key) {
    struct perm_node n = {0}, *l = &n, *r = &n;
    if (!t) return t;
    for (;;) {
        if (key < t->start) {
            if (!t->left) break;
            if (key < t->left->start) { /* rotate right */
                struct perm_node* y = t->left;
                t->left = y->right;
                y->right = t;
                t = y;
                if (!t->left) break;
            }
            r->left = t; /* link right */
            r = t;
            t = t->left;
        } else if (key > t->start) {
            if (!t->right) break;
            if (key > t->right->start) { /* rotate left */
                struct perm_node* y = t->right;
                t->right = y->left;
                y->left = t;
                t = y;
                if (!t->right) break;
            }
            l->right = t; /* link left */
            l = t;
            t = t->right;
        } else {
            break;
        }
    }
    l->right = t->left;
    r->left = t->right;
    t->left = n.right;
    t->right = n.left;
    return t;
}

/* The process's slot; with `create`, a new (or emptied) one when it has none. */
static struct perm_process* find_process(uint32_t id, int create) {
    struct perm_process* reuse = NULL;
    for (unsigned i = 0, h = (id * 2654435761u) >> 26; i < PERM_PROCESSES;
         ++i, h = (h + 1) % PERM_PROCESSES) {
        struct perm_process* p = &procs[h];
        if (!p->used) {
            if (!create) return NULL;
            reuse = reuse ? reuse : p;
            break;
        }
        if (p->id == id) return p;
        if (p->count == 0 && !reuse) reuse = p;
    }
    if (!create || !reuse) return NULL;
    /* An emptied process's slot is taken over only where no live id can sit behind it. */
    reuse->used = 1;
    reuse->id = id;
    reuse->root = NULL;
    reuse->count = 0;
    return reuse;
}

static void release(struct perm_process* p, struct perm_node* x) {
    x->used = 0;
    x->right = free_list;
    free_list = x;
    --p->count;
    --entries;
}

/* Takes the node with `start` out of p's tree; returns it or NULL. */
static struct perm_node* unlink(struct perm_process* p, uint32_t start) {
    struct perm_node* t = splay(p->root, start);
    if (!t || t->start != start) {
        p->root = t;
        return NULL;
    }
    if (!t->left) {
        p->root = t->right;
    } else {
        struct perm_node* x = splay(t->left, start); /* the left subtree's maximum */
        x->right = t->right;
        p->root = x;
    }
    return t;
}

static struct perm_node* take_node(void) {
    if (!free_list) {
        /* Evict: two sweeps at most find an entry not used since the hand passed. */
        for (;;) {
            struct perm_node* v = &nodes[hand];
            hand = (hand + 1) % PERM_ENTRIES;
            if (v->ref) {
                v->ref = 0;
                continue;
            }
            struct perm_process* p = &procs[v->process];
            release(p, unlink(p, v->start));
            ++evictions;
            break;
        }
    }
    struct perm_node* x = free_list;
    free_list = x->right;
    return x;
}

uint32_t perm_add(uint32_t process, uint32_t start, uint32_t length, uint32_t rights) {
    if (length == 0 || rights == 0 || (rights & ~(SPU_OS_PERM_READ | SPU_OS_PERM_WRITE)))
        return SPU_OS_E_BAD_ARG;
    struct perm_process* p = find_process(process, 1);
    if (!p) return SPU_OS_E_STATE;
    struct perm_node* t = splay(p->root, start);
    p->root = t;
    if (t && t->start == start) {
        t->length = length;
        t->rights = (uint8_t)rights;
        t->ref = 1;
        return SPU_OS_OK;
    }
    /* Eviction may reshape this very tree: take the node first, then splay again. */
    struct perm_node* x = take_node();
    t = splay(p->root, start);
    x->start = start;
    x->length = length;
    x->rights = (uint8_t)rights;
    x->process = (uint8_t)(p - procs);
    x->ref = 1;
    x->used = 1;
    if (!t) {
        x->left = x->right = NULL;
    } else if (start < t->start) {
        x->left = t->left;
        x->right = t;
        t->left = NULL;
    } else {
        x->right = t->right;
        x->left = t;
        t->right = NULL;
    }
    p->root = x;
    ++p->count;
    ++entries;
    return SPU_OS_OK;
}

uint32_t perm_remove(uint32_t process, uint32_t start) {
    struct perm_process* p = find_process(process, 0);
    struct perm_node* x = p ? unlink(p, start) : NULL;
    if (!x) return SPU_OS_E_BAD_ARG;
    release(p, x);
    return SPU_OS_OK;
}

int perm_check(uint32_t process, uint32_t addr, uint32_t n, uint32_t rights) {
    struct perm_process* p = find_process(process, 0);
    if (!p || !p->root) return 0;
    struct perm_node* t = splay(p->root, addr);
    if (t->start > addr) {
        /* t is addr's successor: the extent that may cover addr is the left subtree's maximum. */
        if (!t->left) {
            p->root = t;
            return 0;
        }
        struct perm_node* l = splay(t->left, addr);
        t->left = l->right;
        l->right = t;
        t = l;
    }
    p->root = t;
    t->ref = 1;
    return (t->rights & rights) == rights && n <= t->length && addr - t->start <= t->length - n;
}

uint32_t perm_entries(void) { return entries; }
uint32_t perm_evictions(void) { return evictions; }
