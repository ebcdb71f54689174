// @NAME@: an NCCL net plugin built on nccl-net-sdk's object model.
//
// One class with NCCL's newest (v12) semantics; NCCLNET_EXPORT_PLUGIN at the
// bottom exports it as ncclNetPlugin_v6 ... ncclNetPlugin_v12, so every NCCL
// from 2.13 to 2.30 loads it (NCCL_NET_PLUGIN=@NAME@, NCCL_NET=@NAME@).
// The SDK checks every member's signature at compile time.
//
// You write typed objects (the six types below); the SDK keeps every handle
// NCCL holds, refuses stale or wrong ones before your code runs, tells
// test() which comm a request belongs to, and remembers a connect in
// progress between NCCL's calls (docs/object-model.md).
//
// As generated it reports one device and can listen; every other call returns
// ncclInternalError with a WARN saying it is not implemented yet. Fill in the
// members top to bottom; `ncclnet-conformance` tells you what is still wrong
// (docs/contract.md in the SDK's documentation holds every rule).
#include <memory>

#include <ncclnet/plugin.hpp>

namespace {

// Your fabric's objects. Each may be any class; these are placeholders.
struct ListenEndpoint {  // what listen() opens; give it the listening endpoint
  int dev = 0;
};
struct Sender {};        // one connection's sending end
struct Receiver {};      // one connection's receiving end
struct Registration {};  // a registered buffer: its destructor releases it
struct Transfer {};      // a send, receive or flush in flight (you own these)
struct Connecting {};    // a connect in progress, across NCCL's calls

class @CLASS@ {
 public:
  // What NCCL_NET matches, and the prefix of the library's name.
  static constexpr const char* kName = "@NAME@";
  using ListenComm = ListenEndpoint;
  using SendComm = Sender;
  using RecvComm = Receiver;
  using MemHandle = Registration;
  using Request = Transfer;
  using Connector = Connecting;

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

  // The properties NCCL's topology search reads. They arrive holding NCCL's
  // defaults (one receive per irecv, host memory, a host NIC, no virtual
  // NIC): set a name unique per device, the PCI path (/sys/...) that places
  // it near GPUs, the speed in Mbps, and what else differs, e.g. which
  // memory it reaches (NCCL_PTR_CUDA, NCCL_PTR_DMABUF) or maxRecvs.
  ncclResult_t getProperties(int dev, ncclNetProperties_v12_t* props) {
    if (dev != 0) return ncclInvalidArgument;
    props->name = const_cast<char*>("@NAME@0");
    props->pciPath = nullptr;  // e.g. "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
    props->guid = 0x1;         // unique per NIC port
    props->speed = 10000;      // Mbps
    props->port = 1;
    props->maxComms = 65536;
    return ncclSuccess;
  }

  // Opens a listening endpoint on `dev` and writes what a peer needs to
  // reach it into `handle` (ncclnet::kPluginHandleBytes bytes, sent to the
  // peer out of band). Must not block.
  ncclResult_t listen(const ncclnet::CommContext& /*ctx*/, int dev, void* /*handle*/,
                      std::unique_ptr<ListenEndpoint>* out) {
    auto endpoint = std::make_unique<ListenEndpoint>();
    endpoint->dev = dev;
    *out = std::move(endpoint);
    return ncclSuccess;
  }

  // The first connect call with a peer's `handle`: check its bytes (a handle
  // of another plugin or build is an error, not a crash) and start.
  ncclResult_t connect(const ncclnet::CommContext& /*ctx*/, int /*dev*/, const void* /*handle*/,
                       std::unique_ptr<Connecting>* /*out*/) {
    return notImplemented("connect");
  }

  // Every connect call, the first included. Must not block: return
  // ncclSuccess with *out empty while the connection is in progress; NCCL
  // calls again. *sendDevComm stays NULL for a host NIC.
  ncclResult_t connectStep(Connecting& /*connector*/, std::unique_ptr<Sender>* /*out*/,
                           ncclNetDeviceHandle_v12_t** /*sendDevComm*/) {
    return notImplemented("connect");
  }

  // The other end of connect: ncclSuccess with *out empty until done. Drop
  // connections that are not a real peer and keep waiting.
  ncclResult_t accept(ListenEndpoint& /*listen*/, std::unique_ptr<Receiver>* /*out*/,
                      ncclNetDeviceHandle_v12_t** /*recvDevComm*/) {
    return notImplemented("accept");
  }

  // Registers [data, data + size) of memory `type` (NCCL_PTR_HOST, ...) for
  // use on `comm` (its send or its receive end). NCCL registers once and
  // reuses the handle; deregMr comes before the SDK destroys it.
  ncclResult_t regMr(ncclnet::DataComm<@CLASS@> /*comm*/, void* /*data*/, size_t /*size*/,
                     int /*type*/, std::unique_ptr<Registration>* /*out*/) {
    return notImplemented("regMr");
  }
  ncclResult_t deregMr(ncclnet::DataComm<@CLASS@> /*comm*/, Registration& /*mh*/) {
    return notImplemented("deregMr");
  }

  // Posts a send of `size` bytes with `tag`. *request == NULL means "no
  // room, call again". Every request is tested until done.
  ncclResult_t isend(Sender& /*comm*/, void* /*data*/, size_t /*size*/, int /*tag*/,
                     Registration* /*mh*/, void* /*phandle*/, Transfer** /*request*/) {
    return notImplemented("isend");
  }

  // Posts `n` receives (n <= maxRecvs) as one request; a send is matched to
  // the receive with its tag. A send larger than its receive is an error.
  ncclResult_t irecv(Receiver& /*comm*/, int /*n*/, void** /*data*/, size_t* /*sizes*/,
                     int* /*tags*/, Registration** /*mhs*/, void** /*phandles*/,
                     Transfer** /*request*/) {
    return notImplemented("irecv");
  }

  // Makes received GPU data visible to the GPU (GPUDirect). A host NIC
  // leaves *request NULL and returns ncclSuccess.
  ncclResult_t iflush(Receiver& /*comm*/, int /*n*/, void** /*data*/, int* /*sizes*/,
                      Registration** /*mhs*/, Transfer** /*request*/) {
    return notImplemented("iflush");
  }

  // Progresses `request` of `comm`; when it is done sets *done = 1 and, for
  // a receive, sizes[i] to the bytes that arrived (the SDK then forgets the
  // request). Never blocks. A dead peer is an error (ncclRemoteError), not a
  // request pending forever.
  ncclResult_t test(Sender& /*comm*/, Transfer& /*request*/, int* /*done*/, int* /*sizes*/) {
    return notImplemented("test");
  }
  ncclResult_t test(Receiver& /*comm*/, Transfer& /*request*/, int* /*done*/, int* /*sizes*/) {
    return notImplemented("test");
  }

  // NCCL closed the comm: the SDK hands it back; it dies with the pointer
  // unless you keep it (e.g. until operations in flight end).
  ncclResult_t close(std::unique_ptr<Sender> /*comm*/) { return ncclSuccess; }
  ncclResult_t close(std::unique_ptr<Receiver> /*comm*/) { return ncclSuccess; }
  ncclResult_t close(std::unique_ptr<ListenEndpoint> /*comm*/) { return ncclSuccess; }

  // Optional members (leave them out and NCCL sees NULL, "not supported"):
  //   regMrDmaBuf    register GPU memory by DMA-BUF fd (advertise NCCL_PTR_DMABUF)
  //   getDeviceMr    device-side memory handles (device-offload NICs)
  //   irecvConsumed  NCCL has consumed a completed receive (device-offload NICs)
  //   makeVDevice    merge NICs into one virtual device (NCCL_NET_MERGE_LEVEL)
  //   setNetAttr     per-communicator attributes (NCCL 2.28+)
  //   params         the knobs the plugin reads, for `ncclnet-info --params`
  // See ncclnet/object_model.hpp for their signatures.

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
