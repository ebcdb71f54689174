// @NAME@: an NCCL net plugin built on nccl-net-sdk.
//
// One class with NCCL's newest (v12) semantics; NCCLNET_EXPORT_PLUGIN at the
// bottom exports it as ncclNetPlugin_v6 ... ncclNetPlugin_v12, so every NCCL
// from 2.13 to 2.30 loads it (NCCL_NET_PLUGIN=@NAME@, NCCL_NET=@NAME@).
// The SDK checks every member's signature at compile time.
//
// As generated it reports one device and can listen; every other call returns
// ncclInternalError with a WARN saying it is not implemented yet. Fill in the
// members top to bottom; `ncclnet-conformance` tells you what is still wrong
// (docs/contract.md in the SDK's documentation holds every rule).
#include <memory>

#include <ncclnet/plugin.hpp>

namespace {

// What listen() returns and closeListen() frees. Give it your fabric's
// listening endpoint.
struct ListenComm {
  int dev = 0;
};

class @CLASS@ {
 public:
  // What NCCL_NET matches, and the prefix of the library's name.
  static constexpr const char* kName = "@NAME@";

  // Called once per process on the first init (any ABI version); the object
  // lives until the last finalize. Open the fabric and find its devices
  // here; return an error (with a WARN) when no device is usable, so that
  // NCCL falls back to another network.
  static ncclResult_t create(const ncclnet::InitArgs& args, std::unique_ptr<@CLASS@>* out) {
    out->reset(new @CLASS@(args.logger));
    return ncclSuccess;
  }

  // How many devices (NICs) NCCL may use.
  ncclResult_t devices(int* ndev) {
    *ndev = 1;
    return ncclSuccess;
  }

  // The properties NCCL's topology search reads: a name unique per device,
  // the PCI path (/sys/...) that places it near GPUs, speed in Mbps,
  // latency, which memory it can reach (NCCL_PTR_HOST, NCCL_PTR_CUDA,
  // NCCL_PTR_DMABUF), how many receives one irecv may group (maxRecvs).
  // The struct arrives zeroed: every field below is one NCCL reads.
  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) {
    if (dev != 0) return ncclInvalidArgument;
    props->name = const_cast<char*>("@NAME@0");
    props->pciPath = nullptr;  // e.g. "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
    props->guid = 0x1;         // unique per NIC port
    props->ptrSupport = NCCL_PTR_HOST;
    props->speed = 10000;  // Mbps
    props->latency = 0;    // us; 0 lets NCCL use its own estimate
    props->port = 1;
    props->maxComms = 65536;
    props->maxRecvs = 1;
    props->netDeviceType = NCCL_NET_DEVICE_HOST;
    props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
    props->vProps.ndevs = 1;  // a physical device is its own only member
    props->vProps.devs[0] = dev;
    props->maxP2pBytes = NCCL_MAX_NET_SIZE_BYTES;
    props->maxCollBytes = NCCL_MAX_NET_SIZE_BYTES;
    props->maxMultiRequestSize = 1;
    props->railId = NCCL_NET_ID_UNDEF;
    props->planeId = NCCL_NET_ID_UNDEF;
    return ncclSuccess;
  }

  // Opens a listening endpoint on `dev` and writes what a peer needs to
  // reach it into `handle` (NCCL_NET_HANDLE_MAXSIZE bytes, sent to the peer
  // out of band). Must not block.
  ncclResult_t listen(const ncclnet::CommContext& /*ctx*/, int dev, void* /*handle*/,
                      void** listenComm) {
    auto* comm = new ListenComm;
    comm->dev = dev;
    *listenComm = comm;
    return ncclSuccess;
  }

  // Starts a connection to the peer whose listen() wrote `handle`. Must not
  // block: return ncclSuccess with *sendComm == NULL while the connection is
  // in progress; NCCL calls again. *sendDevComm stays NULL for a host NIC.
  ncclResult_t connect(const ncclnet::CommContext& /*ctx*/, int /*dev*/, void* /*handle*/,
                       void** /*sendComm*/, ncclNetDeviceHandle_v12_t** /*sendDevComm*/) {
    return notImplemented("connect");
  }

  // The other end of connect(): same rules, *recvComm == NULL until done.
  // Drop connections that are not a real peer and keep waiting.
  ncclResult_t accept(void* /*listenComm*/, void** /*recvComm*/,
                      ncclNetDeviceHandle_v12_t** /*recvDevComm*/) {
    return notImplemented("accept");
  }

  // Registers [data, data + size) of memory `type` (NCCL_PTR_HOST, ...) for
  // use on `comm` (a send or receive comm). NCCL registers once and reuses.
  ncclResult_t regMr(void* /*comm*/, void* /*data*/, size_t /*size*/, int /*type*/,
                     void** /*mhandle*/) {
    return notImplemented("regMr");
  }
  ncclResult_t deregMr(void* /*comm*/, void* /*mhandle*/) { return notImplemented("deregMr"); }

  // Posts a send of `size` bytes with `tag`. *request == NULL means "no
  // room, call again". Every request is tested until done.
  ncclResult_t isend(void* /*sendComm*/, void* /*data*/, size_t /*size*/, int /*tag*/,
                     void* /*mhandle*/, void* /*phandle*/, void** /*request*/) {
    return notImplemented("isend");
  }

  // Posts `n` receives (n <= maxRecvs) as one request; a send is matched to
  // the receive with its tag. A send larger than its receive is an error.
  ncclResult_t irecv(void* /*recvComm*/, int /*n*/, void** /*data*/, size_t* /*sizes*/,
                     int* /*tags*/, void** /*mhandles*/, void** /*phandles*/,
                     void** /*request*/) {
    return notImplemented("irecv");
  }

  // Makes received GPU data visible to the GPU (GPUDirect). A host NIC
  // sets *request = NULL and returns ncclSuccess.
  ncclResult_t iflush(void* /*recvComm*/, int /*n*/, void** /*data*/, int* /*sizes*/,
                      void** /*mhandles*/, void** /*request*/) {
    return notImplemented("iflush");
  }

  // Progresses `request`; when it is done sets *done = 1 and, for a receive,
  // sizes[i] to the bytes that arrived. Never blocks. A dead peer is an
  // error (ncclRemoteError), not a request pending forever.
  ncclResult_t test(void* /*request*/, int* /*done*/, int* /*sizes*/) {
    return notImplemented("test");
  }

  ncclResult_t closeSend(void* /*sendComm*/) { return notImplemented("closeSend"); }
  ncclResult_t closeRecv(void* /*recvComm*/) { return notImplemented("closeRecv"); }
  ncclResult_t closeListen(void* listenComm) {
    delete static_cast<ListenComm*>(listenComm);
    return ncclSuccess;
  }

  // Optional members (leave them out and NCCL sees NULL, "not supported"):
  //   regMrDmaBuf    register GPU memory by DMA-BUF fd (advertise NCCL_PTR_DMABUF)
  //   getDeviceMr    device-side memory handles (device-offload NICs)
  //   irecvConsumed  NCCL has consumed a completed receive (device-offload NICs)
  //   makeVDevice    merge NICs into one virtual device (NCCL_NET_MERGE_LEVEL)
  //   setNetAttr     per-communicator attributes (NCCL 2.28+)
  //   params         the knobs the plugin reads, for `ncclnet-info --params`
  // See ncclnet/plugin.hpp for their signatures.

 private:
  explicit @CLASS@(ncclnet::Logger log) : log_(log) {}

  ncclResult_t notImplemented(const char* call) {
    NCCLNET_WARN(log_, "%s: not implemented yet in @NAME@", call);
    return ncclInternalError;
  }

  ncclnet::Logger log_;
};

}  // namespace

NCCLNET_EXPORT_PLUGIN(@CLASS@)
