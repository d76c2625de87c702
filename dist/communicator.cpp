#include "dist/communicator.hpp"

#include <climits>

#include "local/core/error.hpp"
#include "local/core/step_trace.hpp"

namespace tessera::dist {

namespace {

MPI_Op to_mpi(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return MPI_SUM;
    case ReduceOp::max: return MPI_MAX;
    case ReduceOp::min: return MPI_MIN;
  }
  return MPI_SUM;
}

// OpenMPI 4.1 has no MPI-4 large counts: counts and displacements are int, in units of a
// contiguous item type, so a message may hold up to 2^31-1 items of any size.
int to_int_count(std::int64_t n) {
  TESSERA_ASSERT(n >= 0 && n <= INT_MAX, "MPI count ", n, " does not fit an int");
  return static_cast<int>(n);
}

std::vector<int> displacements(const std::vector<std::int64_t>& counts) {
  std::vector<int> displs(counts.size());
  std::int64_t at = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    displs[i] = to_int_count(at);
    at += counts[i];
  }
  to_int_count(at);
  return displs;
}

std::vector<int> int_counts(const std::vector<std::int64_t>& counts) {
  std::vector<int> out(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) out[i] = to_int_count(counts[i]);
  return out;
}

// A contiguous datatype of `bytes` bytes, freed on scope exit.
class ItemType {
 public:
  explicit ItemType(std::size_t bytes) {
    MPI_Type_contiguous(to_int_count(static_cast<std::int64_t>(bytes)), MPI_BYTE, &type_);
    MPI_Type_commit(&type_);
  }
  ~ItemType() { MPI_Type_free(&type_); }
  ItemType(const ItemType&) = delete;
  ItemType& operator=(const ItemType&) = delete;
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

constexpr int kExchangeTag = 7301;

}  // namespace

Communicator::Communicator(MPI_Comm base) {
  MPI_Comm_dup(base, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

Communicator::~Communicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
}

Communicator::Communicator(Communicator&& other) noexcept
    : comm_(other.comm_), rank_(other.rank_), size_(other.size_) {
  other.comm_ = MPI_COMM_NULL;
}

Communicator& Communicator::operator=(Communicator&& other) noexcept {
  if (this != &other) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
    comm_ = other.comm_;
    rank_ = other.rank_;
    size_ = other.size_;
    other.comm_ = MPI_COMM_NULL;
  }
  return *this;
}

double Communicator::allreduce(double value, ReduceOp op) const {
  TESSERA_TRACE_STEP("mpi.allreduce");
  double out = 0;
  MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, to_mpi(op), comm_);
  return out;
}

std::int64_t Communicator::allreduce(std::int64_t value, ReduceOp op) const {
  TESSERA_TRACE_STEP("mpi.allreduce");
  std::int64_t out = 0;
  MPI_Allreduce(&value, &out, 1, MPI_INT64_T, to_mpi(op), comm_);
  return out;
}

void Communicator::allreduce_in_place(std::vector<double>& values, ReduceOp op) const {
  TESSERA_TRACE_STEP("mpi.allreduce");
  MPI_Allreduce(MPI_IN_PLACE, values.data(), to_int_count(static_cast<std::int64_t>(values.size())), MPI_DOUBLE,
                to_mpi(op), comm_);
}

void Communicator::allreduce_in_place(std::vector<std::int64_t>& values, ReduceOp op) const {
  TESSERA_TRACE_STEP("mpi.allreduce");
  MPI_Allreduce(MPI_IN_PLACE, values.data(), to_int_count(static_cast<std::int64_t>(values.size())), MPI_INT64_T,
                to_mpi(op), comm_);
}

std::vector<std::int64_t> Communicator::allgather(std::int64_t value) const {
  TESSERA_TRACE_STEP("mpi.allgather");
  std::vector<std::int64_t> all(static_cast<std::size_t>(size_));
  MPI_Allgather(&value, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, comm_);
  return all;
}

std::vector<std::int64_t> Communicator::alltoall(const std::vector<std::int64_t>& send_counts) const {
  TESSERA_TRACE_STEP("mpi.alltoall");
  TESSERA_ASSERT(static_cast<int>(send_counts.size()) == size_, "alltoall needs one count per rank");
  std::vector<std::int64_t> recv(static_cast<std::size_t>(size_));
  MPI_Alltoall(send_counts.data(), 1, MPI_INT64_T, recv.data(), 1, MPI_INT64_T, comm_);
  return recv;
}

void Communicator::alltoallv_bytes(const void* send, const std::vector<std::int64_t>& send_counts, void* recv,
                                   const std::vector<std::int64_t>& recv_counts, std::size_t item_bytes) const {
  TESSERA_TRACE_STEP("mpi.alltoallv");
  const ItemType type(item_bytes);
  const std::vector<int> sc = int_counts(send_counts), rc = int_counts(recv_counts);
  const std::vector<int> sd = displacements(send_counts), rd = displacements(recv_counts);
  MPI_Alltoallv(send, sc.data(), sd.data(), type.get(), recv, rc.data(), rd.data(), type.get(), comm_);
}

void Communicator::gatherv_bytes(const void* send, std::int64_t count, void* recv,
                                 const std::vector<std::int64_t>& counts, std::size_t item_bytes, int root) const {
  TESSERA_TRACE_STEP("mpi.gatherv");
  const ItemType type(item_bytes);
  const std::vector<int> rc = int_counts(counts), rd = displacements(counts);
  MPI_Gatherv(send, to_int_count(count), type.get(), recv, rc.data(), rd.data(), type.get(), root, comm_);
}

std::string Communicator::broadcast(const std::string& text, int root) const {
  TESSERA_TRACE_STEP("mpi.broadcast");
  std::int64_t length = static_cast<std::int64_t>(text.size());
  MPI_Bcast(&length, 1, MPI_INT64_T, root, comm_);
  std::string out = rank_ == root ? text : std::string(static_cast<std::size_t>(length), '\0');
  MPI_Bcast(out.data(), to_int_count(length), MPI_CHAR, root, comm_);
  return out;
}

void Communicator::barrier() const {
  TESSERA_TRACE_STEP("mpi.barrier");
  MPI_Barrier(comm_);
}

HostTransport::~HostTransport() {
  // An exchange abandoned by an exception must not leave requests writing into freed memory.
  if (!requests_.empty()) MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  if (item_type_ != MPI_DATATYPE_NULL) MPI_Type_free(&item_type_);
}

void HostTransport::start_exchange(const ExchangePattern& p, std::size_t item_bytes, const void* send, void* recv) {
  TESSERA_ASSERT(requests_.empty(), "an exchange is already in flight on this transport");
  MPI_Type_contiguous(to_int_count(static_cast<std::int64_t>(item_bytes)), MPI_BYTE, &item_type_);
  MPI_Type_commit(&item_type_);
  // Receives first, so early senders find them posted.
  for (std::size_t i = 0; i < p.recv_ranks.size(); ++i) {
    const std::int64_t n = p.recv_offsets[i + 1] - p.recv_offsets[i];
    if (n == 0) continue;
    requests_.emplace_back();
    MPI_Irecv(static_cast<char*>(recv) + p.recv_offsets[i] * item_bytes, to_int_count(n), item_type_,
              p.recv_ranks[i], kExchangeTag, comm_.mpi(), &requests_.back());
  }
  for (std::size_t i = 0; i < p.send_ranks.size(); ++i) {
    const std::int64_t n = p.send_offsets[i + 1] - p.send_offsets[i];
    if (n == 0) continue;
    requests_.emplace_back();
    MPI_Isend(static_cast<const char*>(send) + p.send_offsets[i] * item_bytes, to_int_count(n), item_type_,
              p.send_ranks[i], kExchangeTag, comm_.mpi(), &requests_.back());
  }
}

void HostTransport::finish_exchange() {
  TESSERA_TRACE_STEP("mpi.exchange_wait");
  MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  requests_.clear();
  if (item_type_ != MPI_DATATYPE_NULL) MPI_Type_free(&item_type_);
}

void HostTransport::allreduce(double* data, std::int64_t count, ReduceOp op) {
  MPI_Allreduce(MPI_IN_PLACE, data, to_int_count(count), MPI_DOUBLE, to_mpi(op), comm_.mpi());
}

void HostTransport::allreduce(std::int64_t* data, std::int64_t count, ReduceOp op) {
  MPI_Allreduce(MPI_IN_PLACE, data, to_int_count(count), MPI_INT64_T, to_mpi(op), comm_.mpi());
}

void throw_if_any_rank_failed(const Communicator& comm, const std::string& local_error) {
  const std::int64_t first_failed =
      comm.allreduce(static_cast<std::int64_t>(local_error.empty() ? comm.size() : comm.rank()), ReduceOp::min);
  if (first_failed == comm.size()) return;
  throw InputError(comm.broadcast(local_error, static_cast<int>(first_failed)));
}

void exchange(const Communicator& comm, const ExchangePattern& pattern, std::size_t item_bytes, const void* send,
              void* recv) {
  HostTransport transport(comm);
  transport.start_exchange(pattern, item_bytes, send, recv);
  transport.finish_exchange();
}

}  // namespace tessera::dist
