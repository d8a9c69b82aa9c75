/* sobas/probe.h — the side probe's wire format (receiver's shim ⇄ the sender host's sobasd, and a preloaded sender ⇄ its own host's sobasd) and its strict codec. */
#ifndef SOBAS_PROBE_H
#define SOBAS_PROBE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every message starts with the same 8-byte header; all integers are big-endian.
 *
 *  off size field
 *    0   2  magic 'S' 'B'
 *    2   1  version (SOBAS_PROBE_VERSION)
 *    3   1  type (enum sobas_msg_type)
 *    4   1  family: 4 or 6
 *    5   1  flags: ECHO may carry SOBAS_PROBE_F_SENDER_LEADS; 0 in every other type
 *    6   2  length: the whole datagram, bytes
 *    8   2  rcv_port   } the TCP flow the message is about, as the receiver sees it:
 *   10   2  snd_port   } rcv = the receiver's own end, snd = the data sender's (sobasd's host);
 *   12  16  rcv_addr   } an IPv4 address fills the first 4 bytes, the other 12 are 0
 *   28  16  snd_addr   }
 *   44   4  nonce: the receiver's random token for this flow, echoed in every reply
 *   48   4  seq: PROBE/ECHO the receiver's probe sequence; TRAIN_REQ/TRAIN the request id
 *   52   8  PROBE/ECHO: ts, the receiver's send time (ns, its own clock), echoed; LEAD: 0
 *       8  TRAIN_REQ: trains (1), 0 (1), train_len (2), pkt_size (2), 0 (2)
 *       8  TRAIN:     train (1), 0 (1), index (2), count (2), 0 (2)
 *   60   4  ECHO: rsp_seq, sobasd's own per-flow echo sequence (gaps = forward-path loss); else 0
 *   64   -  zero padding up to `length`
 *
 * PROBE, ECHO, TRAIN_REQ and LEAD are exactly SOBAS_PROBE_LEN bytes (the paper's 100-byte probe): an echo
 * is never larger than the probe it answers. A TRAIN packet is `pkt_size` bytes of UDP payload.
 *
 * LEAD never leaves the host: a preloaded sender tells its own host's sobasd, over the abstract unix
 * socket SOBAS_LEAD_SOCKET (one per network namespace, as the 4-tuples are), that it steers the flow a
 * receiver's probe named; sobasd checks the sender's credentials against the socket's owner and then
 * sets SOBAS_PROBE_F_SENDER_LEADS in that flow's echoes, and the receiver's sobas stands down
 * (docs/design.md, "When both ends run sobas"). nonce and seq are 0. */
#define SOBAS_PROBE_VERSION 1
#define SOBAS_PROBE_LEN 100
#define SOBAS_PROBE_HDR_LEN 64
#define SOBAS_PROBE_DEFAULT_PORT 9521
#define SOBAS_TRAIN_MAX_TRAINS 8
#define SOBAS_TRAIN_MAX_LEN 64       /* packets per train */
#define SOBAS_TRAIN_MIN_SIZE SOBAS_PROBE_HDR_LEN
#define SOBAS_TRAIN_MAX_SIZE 1472    /* UDP payload of a 1500-byte IPv4 packet */
#define SOBAS_LEAD_SOCKET "sobasd.lead" /* abstract AF_UNIX name (a leading NUL) sobasd takes LEAD on */
#define SOBAS_PROBE_F_SENDER_LEADS 0x01 /* ECHO: the flow's sender runs sobas and steers it */

enum sobas_msg_type {
  SOBAS_MSG_PROBE = 1,     /* receiver → sobasd, every 10 ms */
  SOBAS_MSG_ECHO = 2,      /* sobasd → receiver: the probe back, with rsp_seq */
  SOBAS_MSG_TRAIN_REQ = 3, /* receiver → sobasd: send me packet trains */
  SOBAS_MSG_TRAIN = 4,     /* sobasd → receiver: one packet of a train */
  SOBAS_MSG_LEAD = 5,      /* a preloaded sender → its own host's sobasd: I steer this flow */
};

struct sobas_probe_flow {
  uint8_t family; /* 4 or 6 */
  uint16_t rcv_port, snd_port;
  uint8_t rcv_addr[16], snd_addr[16];
};

/* One decoded message. Fields a type does not carry are 0. */
struct sobas_probe_msg {
  uint8_t type;
  uint8_t flags; /* ECHO: SOBAS_PROBE_F_SENDER_LEADS or 0; other types 0 */
  struct sobas_probe_flow flow;
  uint32_t nonce;
  uint32_t seq;
  uint64_t ts;        /* PROBE, ECHO */
  uint32_t rsp_seq;   /* ECHO */
  uint8_t trains;     /* TRAIN_REQ: trains wanted; TRAIN: which train (0-based) */
  uint16_t train_len; /* TRAIN_REQ: packets per train; TRAIN: this packet's index */
  uint16_t count;     /* TRAIN: packets in this train */
  uint16_t pkt_size;  /* TRAIN_REQ: payload bytes per train packet; TRAIN: this datagram's length */
};

/* Why a datagram was refused; sobasd counts each. */
enum sobas_probe_err {
  SOBAS_PROBE_OK = 0,
  SOBAS_PROBE_E_SHORT = -1,    /* shorter than the header */
  SOBAS_PROBE_E_MAGIC = -2,    /* not ours */
  SOBAS_PROBE_E_VERSION = -3,  /* a version this build does not speak */
  SOBAS_PROBE_E_TYPE = -4,     /* unknown message type */
  SOBAS_PROBE_E_LENGTH = -5,   /* length field ≠ datagram, or wrong for the type */
  SOBAS_PROBE_E_FAMILY = -6,   /* family not 4 or 6, or IPv4 address with bytes past the 4th */
  SOBAS_PROBE_E_RESERVED = -7, /* a reserved byte, an unknown flag or the padding is not 0 */
  SOBAS_PROBE_E_RANGE = -8,    /* a field out of its range (port 0, train index ≥ count, ...) */
};
#define SOBAS_PROBE_N_ERRORS 9

/* Encodes m into buf; returns the datagram length, or a negative error when m is not valid (the
 * encoder checks what the decoder checks) or cap is too small. For TRAIN, m->pkt_size is the length. */
int sobas_probe_encode(const struct sobas_probe_msg *m, uint8_t *buf, size_t cap);

/* Decodes one datagram of len bytes; returns SOBAS_PROBE_OK and fills *m, or a negative error. */
int sobas_probe_decode(const uint8_t *buf, size_t len, struct sobas_probe_msg *m);

const char *sobas_probe_err_name(int err);

#ifdef __cplusplus
}
#endif
#endif
