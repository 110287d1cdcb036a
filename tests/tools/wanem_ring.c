/* wanem_ring: the packets one direction holds, oldest first, in one byte ring of a fixed size
 * (the queue limit). Each entry is a header and the unit, contiguous, so a read from the
 * device goes straight into the ring. When the room left before the end is too small, the
 * entry goes to the start and the end is left unused until the head passes it; the tail can
 * then not wrap again before the head has, so one wrap point is all the ring has to keep. */
#include "wanem.h"

#include <stdlib.h>
#include <sys/mman.h>

#define ALIGN16(x) (((x) + 15) & ~(size_t)15)

size_t wanem_ring_need(size_t len) { return ALIGN16(sizeof(struct wanem_entry) + len); }

int wanem_ring_init(struct wanem_ring *r, size_t cap)
{
    *r = (struct wanem_ring){.wrap_at = SIZE_MAX};
    cap = ALIGN16(cap);
    /* pages are touched only when packets are held: a large limit costs nothing idle */
    r->buf =
        mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r->buf == MAP_FAILED) {
        r->buf = NULL;
        return -1;
    }
    r->cap = cap;
    return 0;
}

void wanem_ring_free(struct wanem_ring *r)
{
    if (r->buf)
        munmap(r->buf, r->cap);
    r->buf = NULL;
}

struct wanem_entry *wanem_ring_reserve(struct wanem_ring *r, size_t len)
{
    size_t need = wanem_ring_need(len);

    if (r->count == 0) { /* empty: start over at 0, the whole ring is free */
        r->head = r->tail = 0;
        r->wrap_at = SIZE_MAX;
        r->used = 0;
    }
    r->res_wrap = false;
    if (r->tail >= r->head && r->wrap_at == SIZE_MAX) {
        if (need <= r->cap - r->tail) {
            r->res_off = r->tail;
            return (struct wanem_entry *)(r->buf + r->tail);
        }
        if (need < r->head) { /* strictly: a full ring would look empty */
            r->res_off = 0;
            r->res_wrap = true;
            return (struct wanem_entry *)r->buf;
        }
        return NULL;
    }
    if (need < r->head - r->tail) {
        r->res_off = r->tail;
        return (struct wanem_entry *)(r->buf + r->tail);
    }
    return NULL;
}

void wanem_ring_commit(struct wanem_ring *r)
{
    struct wanem_entry *e = (struct wanem_entry *)(r->buf + r->res_off);
    size_t need = wanem_ring_need(e->len);

    if (r->res_wrap) {
        r->wrap_at = r->tail;
        r->used += r->cap - r->tail; /* the gap at the end */
    }
    r->tail = r->res_off + need;
    r->used += need;
    r->count++;
}

struct wanem_entry *wanem_ring_head(const struct wanem_ring *r)
{
    return r->count ? (struct wanem_entry *)(r->buf + r->head) : NULL;
}

void wanem_ring_pop(struct wanem_ring *r)
{
    struct wanem_entry *e = wanem_ring_head(r);

    if (!e)
        return;
    r->head += wanem_ring_need(e->len);
    r->used -= wanem_ring_need(e->len);
    r->count--;
    if (r->head == r->wrap_at) { /* the entries before the wrap are all gone */
        r->used -= r->cap - r->wrap_at;
        r->head = 0;
        r->wrap_at = SIZE_MAX;
    }
}
