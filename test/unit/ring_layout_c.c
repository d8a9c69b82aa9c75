/* ring_layout_c.c — the ring ABI's sizes and offsets as the C compiler lays them out (ring_test.cc compares them with C++'s and with the pinned numbers). */
#include <stddef.h>

#include "sobas/ring.h"

#define OFF(t, f) offsetof(struct t, f)
const size_t sobas_ring_layout_c[] = {
    sizeof(struct sobas_ring_header),           OFF(sobas_ring_header, abi_major),
    OFF(sobas_ring_header, header_size),        OFF(sobas_ring_header, capacity),
    OFF(sobas_ring_header, created_ns),         OFF(sobas_ring_header, owner_uid),
    OFF(sobas_ring_header, ticket),             OFF(sobas_ring_header, dropped),
    OFF(sobas_ring_header, stolen),             sizeof(struct sobas_ring_record),
    OFF(sobas_ring_record, seq),                OFF(sobas_ring_record, check),
    OFF(sobas_ring_record, t_ns),               OFF(sobas_ring_record, pid),
    OFF(sobas_ring_record, flow_id),            OFF(sobas_ring_record, comm),
    OFF(sobas_ring_record, event),              OFF(sobas_ring_record, lever),
    OFF(sobas_ring_record, lport),              OFF(sobas_ring_record, laddr),
    OFF(sobas_ring_record, raddr),              OFF(sobas_ring_record, limit),
    OFF(sobas_ring_record, policy),             OFF(sobas_ring_record, rate_bps),
    OFF(sobas_ring_record, cap_bps),            OFF(sobas_ring_record, rtt_us),
    OFF(sobas_ring_record, age_ms),             OFF(sobas_ring_record, pad),
    OFF(sobas_ring_header, board),              sizeof(struct sobas_ring_board_slot),
    OFF(sobas_ring_board_slot, path),           OFF(sobas_ring_board_slot, seen_ns),
    OFF(sobas_ring_board_slot, reserved),       OFF(sobas_ring_board_slot, searching),
};
const size_t sobas_ring_layout_c_n = sizeof sobas_ring_layout_c / sizeof sobas_ring_layout_c[0];
