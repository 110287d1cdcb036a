/* wanem_pkt: the units a TUN device with IFF_VNET_HDR hands over (vnet header + IP packet),
 * and cutting a super-packet into runs of its segments.
 *
 * With TSO/USO offered (TUNSETOFFLOAD), the kernel reads out TCP and UDP super-packets of up
 * to 64 KB: one IP and transport header, gso_size bytes of payload per segment, the transport
 * checksum left partial (NEEDS_CSUM: the field holds the folded pseudo-header sum, to be
 * completed over csum_start..end). On the wire each segment is its own packet with hdr_len
 * bytes of headers. When loss removes some segments, the survivors are written as runs of
 * consecutive segments, each a valid super-packet (or plain packet) again, fixed the way the
 * kernel's software segmentation fixes its segments: IPv4 total length, ID (+1 per segment)
 * and header checksum; IPv6 payload length; TCP sequence number (+gso_size per segment), FIN
 * and PSH only on the segment that ends the super-packet, CWR only on the first; UDP length;
 * the partial checksum recomputed for the run's length. */
#include "wanem.h"

#include <linux/virtio_net.h>
#include <string.h>

static uint16_t rd16le(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint16_t rd16be(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t rd32be(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static void wr16le(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void wr16be(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static void wr32be(uint8_t *p, uint32_t v)
{
    wr16be(p, (uint16_t)(v >> 16));
    wr16be(p + 2, (uint16_t)v);
}

uint32_t wanem_csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
    size_t i;

    for (i = 0; i + 1 < len; i += 2) {
        sum += rd16be(p + i);
        if (sum & 0x80000000u) /* fold early: never overflows */
            sum = (sum & 0xffff) + (sum >> 16);
    }
    if (i < len)
        sum += (uint32_t)p[i] << 8;
    return sum;
}

uint16_t wanem_csum_fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)sum;
}

static uint8_t proto_class(uint8_t ipproto)
{
    switch (ipproto) {
    case 6: return WANEM_P_TCP;
    case 17: return WANEM_P_UDP;
    case 1:
    case 58: return WANEM_P_ICMP;
    default: return WANEM_P_OTHER;
    }
}

/* IP version, header length and protocol of a plain packet; 0 when it is not IP */
static size_t parse_ip(const uint8_t *ip, size_t iplen, struct wanem_pkt *p)
{
    if (iplen >= 20 && ip[0] >> 4 == 4) {
        size_t l3 = (size_t)(ip[0] & 15) * 4;
        if (l3 < 20 || l3 > iplen)
            return 0;
        p->ipver = 4;
        p->proto = proto_class(ip[9]);
        return l3;
    }
    if (iplen >= 40 && ip[0] >> 4 == 6) {
        p->ipver = 6;
        p->proto = proto_class(ip[6]);
        return 40;
    }
    return 0;
}

/* The super-packet checks; on success fills the segment fields. */
static int parse_gso(const uint8_t *unit, const uint8_t *ip, size_t iplen, size_t l3,
                     struct wanem_pkt *p)
{
    size_t toff = rd16le(unit + 6), coff = rd16le(unit + 8), hdr;
    uint16_t gso_size = rd16le(unit + 4);
    bool tcp = p->gso_type == VIRTIO_NET_HDR_GSO_TCPV4 || p->gso_type == VIRTIO_NET_HDR_GSO_TCPV6;

    if (!(unit[0] & VIRTIO_NET_HDR_F_NEEDS_CSUM) || !p->ipver || !gso_size)
        return -1;
    if (p->ipver == 4) {
        if (p->gso_type == VIRTIO_NET_HDR_GSO_TCPV6 || toff != l3 || rd16be(ip + 2) != iplen)
            return -1;
    } else if (p->gso_type == VIRTIO_NET_HDR_GSO_TCPV4 || toff < 40 ||
               rd16be(ip + 4) != iplen - 40) {
        return -1;
    }
    if (tcp) {
        if (coff != 16 || toff + 20 > iplen)
            return -1;
        hdr = toff + (size_t)(ip[toff + 12] >> 4) * 4;
        if (hdr < toff + 20)
            return -1;
        p->proto = WANEM_P_TCP;
    } else if (p->gso_type == VIRTIO_NET_HDR_GSO_UDP_L4) {
        if (coff != 6)
            return -1;
        hdr = toff + 8;
        p->proto = WANEM_P_UDP;
    } else {
        return -1; /* legacy UFO and anything newer: one unit, never cut */
    }
    if (hdr >= iplen)
        return -1;
    p->l4_off = (uint16_t)toff;
    p->hdr_len = (uint16_t)hdr;
    p->gso_size = gso_size;
    p->payload = (uint32_t)(iplen - hdr);
    p->segs = (p->payload + gso_size - 1) / gso_size;
    p->wire_len = iplen + (uint64_t)(p->segs - 1) * hdr;
    p->splittable = true;
    return 0;
}

int wanem_pkt_parse(const uint8_t *unit, size_t len, struct wanem_pkt *p)
{
    const uint8_t *ip = unit + WANEM_VNET_LEN;
    size_t iplen, l3;

    memset(p, 0, sizeof(*p));
    p->proto = WANEM_P_OTHER;
    p->segs = 1;
    if (len < WANEM_VNET_LEN || len - WANEM_VNET_LEN > WANEM_MAX_IP)
        return -1;
    iplen = len - WANEM_VNET_LEN;
    p->ip_len = (uint32_t)iplen;
    p->wire_len = iplen;
    l3 = parse_ip(ip, iplen, p);
    p->gso_type = unit[1] & (uint8_t)~VIRTIO_NET_HDR_GSO_ECN;
    if (p->gso_type == VIRTIO_NET_HDR_GSO_NONE)
        return 0;
    return parse_gso(unit, ip, iplen, l3, p);
}

/* the partial checksum the kernel leaves in a transport header: the folded pseudo-header sum
 * (addresses, protocol, transport length), not complemented */
static uint16_t pseudo_partial(const uint8_t *ip, uint8_t ipver, uint8_t ipproto, size_t l4len)
{
    uint32_t sum = ipver == 4 ? wanem_csum_add(0, ip + 12, 8) : wanem_csum_add(0, ip + 8, 32);

    sum += ipproto;
    sum += (uint32_t)(l4len & 0xffff) + (uint32_t)(l4len >> 16);
    return wanem_csum_fold(sum);
}

static void fix_headers(uint8_t *ip, const struct wanem_pkt *p, uint32_t first, bool last,
                        size_t iplen)
{
    uint8_t *l4 = ip + p->l4_off;
    size_t l4len = iplen - p->l4_off;

    if (p->ipver == 4) {
        wr16be(ip + 2, (uint16_t)iplen);
        wr16be(ip + 4, (uint16_t)(rd16be(ip + 4) + first));
        ip[10] = ip[11] = 0;
        wr16be(ip + 10, (uint16_t)~wanem_csum_fold(wanem_csum_add(0, ip, p->l4_off)));
    } else {
        wr16be(ip + 4, (uint16_t)(iplen - 40));
    }
    if (p->proto == WANEM_P_TCP) {
        wr32be(l4 + 4, rd32be(l4 + 4) + first * (uint32_t)p->gso_size);
        if (!last)
            l4[13] &= (uint8_t) ~(0x01 | 0x08); /* FIN, PSH */
        if (first > 0)
            l4[13] &= (uint8_t)~0x80; /* CWR */
        wr16be(l4 + 16, pseudo_partial(ip, p->ipver, 6, l4len));
    } else {
        wr16be(l4 + 4, (uint16_t)l4len);
        wr16be(l4 + 6, pseudo_partial(ip, p->ipver, 17, l4len));
    }
}

size_t wanem_pkt_run(const uint8_t *unit, const struct wanem_pkt *p, uint32_t first, uint32_t n,
                     uint8_t *out, size_t cap)
{
    size_t off, plen, total;

    if (!p->splittable || n == 0 || first >= p->segs || n > p->segs - first)
        return 0;
    off = (size_t)first * p->gso_size;
    plen = (size_t)n * p->gso_size;
    if (plen > p->payload - off)
        plen = p->payload - off;
    total = WANEM_VNET_LEN + p->hdr_len + plen;
    if (total > cap)
        return 0;
    memcpy(out, unit, WANEM_VNET_LEN + (size_t)p->hdr_len);
    memcpy(out + WANEM_VNET_LEN + p->hdr_len, unit + WANEM_VNET_LEN + p->hdr_len + off, plen);
    wr16le(out + 2, p->hdr_len);
    if (n == 1) { /* one segment is a plain packet: its checksum still to be completed */
        out[1] = VIRTIO_NET_HDR_GSO_NONE;
        wr16le(out + 4, 0);
    }
    fix_headers(out + WANEM_VNET_LEN, p, first, first + n == p->segs, p->hdr_len + plen);
    return total;
}

static bool is_lost(const uint8_t *lost, uint32_t i) { return lost[i / 8] & (1u << (i % 8)); }

uint32_t wanem_pkt_next_run(const uint8_t *lost, uint32_t segs, uint32_t *i)
{
    uint32_t n = 0;

    while (*i < segs && is_lost(lost, *i))
        (*i)++;
    while (*i + n < segs && !is_lost(lost, *i + n))
        n++;
    return n;
}
