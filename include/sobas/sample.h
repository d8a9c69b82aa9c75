/* sobas/sample.h — the measurement contract: what the shim reads from the kernel and what a 2·RTT window reports. */
#ifndef SOBAS_SAMPLE_H
#define SOBAS_SAMPLE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One reading of a flow's kernel counters (TCP_INFO), timestamped by the reader.
 * Fields the running kernel did not return (short TCP_INFO) are 0 and flagged absent in `have`. */
struct sobas_sample {
  int64_t t_ns;               /* CLOCK_MONOTONIC */
  uint64_t bytes_received;    /* tcpi_bytes_received */
  uint64_t bytes_acked;       /* tcpi_bytes_acked */
  uint32_t rcv_rtt_us;        /* tcpi_rcv_rtt: receiver-side RTT estimate, 0 until measured */
  uint32_t rtt_us;            /* tcpi_rtt: smoothed RTT from our own sent data */
  uint32_t min_rtt_us;        /* tcpi_min_rtt */
  uint32_t rcv_wnd;           /* tcpi_rcv_wnd: window we advertise (bytes), needs kernel >= 6.2 */
  uint32_t snd_cwnd;          /* tcpi_snd_cwnd (segments) */
  uint32_t snd_mss;           /* tcpi_snd_mss */
  uint32_t rcv_mss;           /* tcpi_rcv_mss: the segment size the peer sends us */
  uint32_t rcv_space;         /* tcpi_rcv_space: receive autotuning's estimate */
  uint32_t total_retrans;     /* tcpi_total_retrans (segments) */
  uint32_t rcv_ooopack;       /* tcpi_rcv_ooopack: out-of-order segments received */
  uint32_t snd_wnd;           /* tcpi_snd_wnd: the window the peer advertises to us (bytes) */
  uint32_t delivered;         /* tcpi_delivered: segments delivered, SACKed ones included (Linux 4.18+) */
  uint64_t busy_us;           /* tcpi_busy_time: time with data outstanding (the sender's chrono) */
  uint64_t rwnd_limited_us;   /* tcpi_rwnd_limited: of the busy time, held by the peer's window */
  uint64_t sndbuf_limited_us; /* tcpi_sndbuf_limited: of the busy time, starved by our send buffer */
  uint64_t delivery_bps;      /* tcpi_delivery_rate (bit/s): the kernel's latest delivery-rate sample, over about an RTT */
  uint8_t app_limited;        /* tcpi_delivery_rate_app_limited: the last delivery sample had no data to send */
  uint8_t state;              /* tcpi_state (TCP_ESTABLISHED = 1) */
  uint8_t have;               /* SOBAS_HAVE_* bits */
  uint32_t snd_ssthresh;      /* tcpi_snd_ssthresh (segments; 0x7fffffff before the first exit from slow start);
                                 here, in the padding after the bytes, the struct stays 112 bytes */
};

#define SOBAS_HAVE_RCV_OOOPACK 0x01u
#define SOBAS_HAVE_RCV_WND 0x02u
#define SOBAS_HAVE_CHRONO 0x04u /* busy_us, rwnd_limited_us, sndbuf_limited_us, snd_wnd, app_limited (Linux 4.10+) */
#define SOBAS_HAVE_DELIVERED 0x08u /* delivered (Linux 4.18+) */

/* Direction a flow mostly moves data in, from the bytes its process read and wrote. */
enum sobas_role { SOBAS_ROLE_NONE = 0, SOBAS_ROLE_RECEIVER = 1, SOBAS_ROLE_SENDER = 2, SOBAS_ROLE_BOTH = 3 };

/* What held a flow back during a window, as far as its own end can tell (sobas_window_limit). A
 * sender reads it from the kernel's chrono stats; a receiver only knows its own window and reader. */
enum sobas_limit {
  SOBAS_LIMIT_UNKNOWN = 0,        /* no window yet, or a kernel without the chrono stats */
  SOBAS_LIMIT_APP = 1,            /* the application: a sender gave too little data, a receiver read too little */
  SOBAS_LIMIT_PEER_WINDOW = 2,    /* a sender held by the window its peer advertises */
  SOBAS_LIMIT_SNDBUF = 3,         /* a sender starved by its own send buffer */
  SOBAS_LIMIT_PATH = 4,           /* a sender's congestion window: the path */
  SOBAS_LIMIT_SOBAS = 5,          /* sobas's hold: the receiver's window S, or the sender's pacing */
  SOBAS_LIMIT_RCV_WINDOW = 6,     /* a receiver's own window (autotuning, or the application's SO_RCVBUF) */
  SOBAS_LIMIT_SENDER_OR_PATH = 7, /* a receiver not holding the flow back: the sender or the path, it cannot tell */
};

/* One measurement window of length ~2·RTT (paper §IV): rates are over [t_start, t_end). */
struct sobas_window {
  int64_t t_start_ns;
  int64_t t_end_ns;
  uint64_t rx_bytes;          /* received in the window */
  uint64_t tx_bytes;          /* delivered in the window: acked, or fewer when the segments delivered say so (measure.c) */
  uint64_t rx_rate_bps;       /* bits per second */
  uint64_t tx_rate_bps;
  uint32_t rtt_us;            /* the RTT the window length was based on */
  uint32_t retrans;           /* retransmitted segments during the window */
  uint32_t ooopack;           /* out-of-order segments during the window */
  uint64_t busy_us;           /* the sender's chrono during the window: busy, and of that time */
  uint64_t rwnd_limited_us;   /* held by the peer's receive window */
  uint64_t sndbuf_limited_us; /* or starved by the send buffer */
  uint64_t delivery_bps;      /* the kernel's delivery-rate sample at the window's end: the rate now, not the window's mean */
  uint8_t app_limited;        /* the kernel's app-limited mark at the window's end */
};

#ifdef __cplusplus
}
#endif
#endif
