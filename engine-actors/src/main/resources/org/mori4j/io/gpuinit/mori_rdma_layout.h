// mori4j GPU-initiated RDMA device library, the layout: the MoriRdmaEndpoint block (control block, send queue,
// completion queue, receive queue, result cells), the work-request and completion formats and their constants, in
// plain C so that the host side can check it (GpuQueueLayout is the Java mirror; GpuQueueLayoutHeaderTest compiles
// the part between the markers with gcc and compares every offset). GpuInitiatedKernels puts this file where
// mori_rdma.cuh includes it.

// ---- layout begin: plain C from here to 'layout end' (GpuQueueLayoutHeaderTest compiles this part with gcc) ----

// Control block identity (GpuQueueLayout.MAGIC / VERSION on the host).
#define MORI_RDMA_MAGIC 0x5045524Du
#define MORI_RDMA_VERSION 1u

// Send opcodes (ibv_wr_opcode values).
#define MORI_RDMA_OP_RDMA_WRITE 0
#define MORI_RDMA_OP_RDMA_WRITE_WITH_IMM 1
#define MORI_RDMA_OP_SEND 2
#define MORI_RDMA_OP_RDMA_READ 4
#define MORI_RDMA_OP_ATOMIC_CMP_AND_SWP 5
#define MORI_RDMA_OP_ATOMIC_FETCH_AND_ADD 6

// Send flags (ibv_send_flags values). SOLICITED and INLINE are accepted and ignored by the proxy.
#define MORI_RDMA_FLAG_FENCE 1u
#define MORI_RDMA_FLAG_SIGNALED 2u
#define MORI_RDMA_FLAG_SOLICITED 4u
#define MORI_RDMA_FLAG_INLINE 8u

// Completion status (ibv_wc_status values).
#define MORI_RDMA_WC_SUCCESS 0
#define MORI_RDMA_WC_LOC_LEN_ERR 1
#define MORI_RDMA_WC_LOC_PROT_ERR 4
#define MORI_RDMA_WC_WR_FLUSH_ERR 5
#define MORI_RDMA_WC_REM_INV_REQ_ERR 9
#define MORI_RDMA_WC_REM_ACCESS_ERR 10
#define MORI_RDMA_WC_REM_OP_ERR 11
#define MORI_RDMA_WC_RETRY_EXC_ERR 12
#define MORI_RDMA_WC_RNR_RETRY_EXC_ERR 13
#define MORI_RDMA_WC_GENERAL_ERR 21

// Completion opcodes (ibv_wc_opcode values).
#define MORI_RDMA_WC_OP_SEND 0
#define MORI_RDMA_WC_OP_RDMA_WRITE 1
#define MORI_RDMA_WC_OP_RDMA_READ 2
#define MORI_RDMA_WC_OP_COMP_SWAP 3
#define MORI_RDMA_WC_OP_FETCH_ADD 4
#define MORI_RDMA_WC_OP_RECV 128
#define MORI_RDMA_WC_OP_RECV_RDMA_WITH_IMM 129

// CQE flags bit 0: the completion carries an immediate.
#define MORI_RDMA_CQE_FLAG_HAS_IMM 1u

// Endpoint state (written by the proxy).
#define MORI_RDMA_STATE_RESET 0u
#define MORI_RDMA_STATE_RTS 1u
#define MORI_RDMA_STATE_ERROR 2u

// The structs below are the byte layout of GpuQueueLayout (host side); GpuQueueLayoutHeaderTest compiles
// them with gcc and compares every offset. Only fixed-size C types, so that they mean the same thing to
// gcc, NVRTC and hiprtc. The counters that the device and the proxy write sit on lines of their own (the
// padding arrays); do not put fields into the padding.

// The control block: 1024 bytes at the start of the endpoint's allocation (64-byte aligned).
typedef struct __attribute__((aligned(64))) {
  unsigned int magic;                  // 0: MORI_RDMA_MAGIC ("MREP")
  unsigned int version;                // 4: MORI_RDMA_VERSION
  unsigned int qpn;                    // 8
  unsigned int sqDepth;                // 12: power of 2
  unsigned int cqDepth;                // 16: power of 2
  unsigned int rqDepth;                // 20: power of 2, or 0 (no receive queue)
  unsigned int internalLkey;           // 24: lkey of the atomic result cells
  unsigned int reserved0;              // 28
  unsigned long long sqRing;           // 32: sqDepth MoriRdmaWqe
  unsigned long long cqRing;           // 40: cqDepth MoriRdmaCqe
  unsigned long long rqRing;           // 48: rqDepth MoriRdmaRecvWqe (0 when rqDepth is 0)
  unsigned long long atomicResults;    // 56: sqDepth u64; cell i % sqDepth is WQE i's
  unsigned long long sqPostIdx;        // 64: device: next WQE index to reserve
  unsigned long long waitTimeoutNs;    // 72: device waits trap after this (0 = never)
  unsigned char pad0[48];              // 80
  unsigned long long sqDbrRecord;      // 128: device: WQEs [0, v) are completely written
  unsigned char pad1[56];              // 136
  unsigned long long sqDoorbell;       // 192: device: execute up to v (monotonic max)
  unsigned char pad2[56];              // 200
  unsigned long long cqDbrRecord;      // 256: device: CQEs [0, v) consumed
  unsigned long long cqPollIdx;        // 264: device: the poller's next CQE index
  unsigned char pad3[48];              // 272
  unsigned long long sqRetired;        // 320: proxy: WQEs [0, v) executed and completed
  unsigned char pad4[56];              // 328
  unsigned long long cqProducerIdx;    // 384: proxy: CQEs [0, v) written
  unsigned char pad5[56];              // 392
  unsigned int errorCount;             // 448: proxy
  unsigned int firstErrorStatus;       // 452: proxy (ibv_wc_status)
  unsigned long long firstErrorWrId;   // 456: proxy
  unsigned int state;                  // 464: proxy: MORI_RDMA_STATE_*
  unsigned char pad6[44];              // 468
  unsigned long long rqPostIdx;        // 512: device: next receive index to reserve
  unsigned char pad7[56];              // 520
  unsigned long long rqDbrRecord;      // 576: device: receive WQEs [0, v) written
  unsigned char pad8[56];              // 584
  unsigned long long rqRetired;        // 640: proxy: receive WQEs consumed
  unsigned char pad9[376];             // 648
} MoriRdmaEndpoint;                    // 1024 bytes

// A send work request: 64 bytes, slot index & (sqDepth - 1).
typedef struct {
  unsigned char opcode;                // 0: MORI_RDMA_OP_*
  unsigned char flags;                 // 1: MORI_RDMA_FLAG_*
  unsigned short reserved0;            // 2
  unsigned int immediate;              // 4: WRITE_WITH_IMM (and SEND with imm)
  unsigned long long wrId;             // 8
  unsigned long long localAddr;        // 16
  unsigned int lkey;                   // 24
  unsigned int length;                 // 28
  unsigned long long remoteAddr;       // 32
  unsigned int rkey;                   // 40
  unsigned int reserved1;              // 44
  unsigned long long compareAdd;       // 48: CAS compare / fetch-add addend
  unsigned long long swap;             // 56: CAS swap value
} MoriRdmaWqe;                         // 64 bytes

// A completion: 32 bytes, slot index & (cqDepth - 1); valid when owner == (index + 1) as 32 bits.
typedef struct {
  unsigned long long wrId;             // 0
  unsigned int status;                 // 8: MORI_RDMA_WC_* status
  unsigned char opcode;                // 12: MORI_RDMA_WC_* opcode
  unsigned char flags;                 // 13: MORI_RDMA_CQE_FLAG_HAS_IMM
  unsigned short reserved0;            // 14
  unsigned int byteLen;                // 16
  unsigned int immediate;              // 20
  unsigned int wqeIndex;               // 24: low 32 bits of the SQ or RQ index
  unsigned int owner;                  // 28: stored last by the proxy
} MoriRdmaCqe;                         // 32 bytes

// A receive work request: 32 bytes, slot index & (rqDepth - 1).
typedef struct {
  unsigned long long wrId;             // 0
  unsigned long long addr;             // 8
  unsigned int lkey;                   // 16
  unsigned int length;                 // 20
  unsigned long long reserved0;        // 24
} MoriRdmaRecvWqe;                     // 32 bytes

// ---- layout end ----
