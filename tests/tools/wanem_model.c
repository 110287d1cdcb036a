/* wanem_model: the random source and the loss draw. Loss is drawn once per wire segment (an
 * MSS-sized TCP segment, one UDP datagram, any other packet), so a 64 KB super-packet of 45
 * segments takes 45 draws, exactly as if the 45 packets had crossed the link one by one. */
#include "wanem.h"

void wanem_rng_seed(struct wanem_rng *g, uint64_t seed) { g->s = seed; }

uint64_t wanem_rng_next(struct wanem_rng *g)
{
    uint64_t z = (g->s += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double wanem_rng_unit(struct wanem_rng *g) { return (double)(wanem_rng_next(g) >> 11) * 0x1p-53; }

bool wanem_loss_active(const struct wanem_loss *l) { return l->every > 0 || l->p > 0; }

bool wanem_loss_draw(struct wanem_loss *l)
{
    l->counted++;
    if (l->every)
        return l->counted % l->every == 0;
    if (l->p <= 0)
        return false;
    return wanem_rng_unit(&l->rng) < l->p;
}
