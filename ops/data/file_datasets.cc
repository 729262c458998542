// TFRecordDataset(V2), TextLineDataset and FixedLengthRecordDataset(V2): files
// read one after the other, each record (line, fixed-size record) a string
// scalar. Checkpoints save the file index and the position in the file.
//
// buffer_size is checked, not used: files are read through stdio's and the
// record reader's own buffers.
// Limits: TextLineDataset and FixedLengthRecordDataset read uncompressed
// files only (Unimplemented for "ZLIB"/"GZIP"); TFRecordDataset reads all
// three. A restored TFRecord reader re-reads its file up to the saved offset
// (compressed streams cannot seek).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/data/dataset_kernel.h"
#include "ops/data/internal/dataset_kernels.h"
#include "runtime/io/record_compression.h"
#include "runtime/io/record_reader.h"

namespace sluice {
namespace data {
namespace {

enum class FileFormat { kTFRecord, kTextLine, kFixedLength };

struct FileOptions {
  FileFormat format = FileFormat::kTFRecord;
  RecordCompression compression = RecordCompression::kNone;
  std::vector<int64_t> byte_offsets;  // TFRecordDatasetV2: where each file starts
  int64_t header_bytes = 0, record_bytes = 0, footer_bytes = 0;  // fixed length
};

class FilesDataset : public DatasetBase {
 public:
  FilesDataset(std::string node, std::vector<std::string> files, FileOptions options)
      : DatasetBase(std::move(node), {DT_STRING}, {TensorShape()}),
        files_(std::move(files)),
        options_(std::move(options)) {}
  std::string Name() const override {
    switch (options_.format) {
      case FileFormat::kTextLine: return "TextLine";
      case FileFormat::kFixedLength: return "FixedLengthRecord";
      default: return "TFRecord";
    }
  }
  const std::vector<std::string>& files() const { return files_; }
  const FileOptions& options() const { return options_; }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal(std::string prefix) const override;

 private:
  const std::vector<std::string> files_;
  const FileOptions options_;
};

class FileCloser {
 public:
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

class FilesIterator : public DatasetIterator<FilesDataset> {
 public:
  using DatasetIterator::DatasetIterator;

  absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
    out->clear();
    *end = false;
    const std::vector<std::string>& files = dataset()->files();
    while (file_index_ < static_cast<int64_t>(files.size())) {
      if (!open_) RETURN_IF_ERROR(OpenFile(0));
      std::string record;
      absl::StatusOr<bool> got = ReadOne(&record);
      if (!got.ok()) return got.status();
      if (*got) {
        Tensor t(DT_STRING, TensorShape());
        t.scalar<std::string>() = std::move(record);
        out->push_back(std::move(t));
        return absl::OkStatus();
      }
      CloseFile();
      ++file_index_;
    }
    *end = true;
    return absl::OkStatus();
  }

  absl::Status Save(IteratorStateWriter* w) override {
    w->WriteInt(Key("file_index"), file_index_);
    w->WriteInt(Key("offset"), open_ ? Offset() : -1);
    return absl::OkStatus();
  }

  absl::Status Restore(IteratorContext*, const IteratorStateReader& r) override {
    CloseFile();
    ASSIGN_OR_RETURN(file_index_, r.ReadInt(Key("file_index")));
    ASSIGN_OR_RETURN(int64_t offset, r.ReadInt(Key("offset")));
    if (offset >= 0 && file_index_ < static_cast<int64_t>(dataset()->files().size())) {
      RETURN_IF_ERROR(OpenFile(offset));
    }
    return absl::OkStatus();
  }

 private:
  const std::string& path() const { return dataset()->files()[file_index_]; }

  // Opens the current file at `offset` (0: its start, or the byte offset /
  // header the dataset asks for).
  absl::Status OpenFile(int64_t offset) {
    const FileOptions& o = dataset()->options();
    if (o.format == FileFormat::kTFRecord) {
      ASSIGN_OR_RETURN(records_, RecordReader::Open(path(), o.compression));
      int64_t start = offset;
      if (start == 0 && file_index_ < static_cast<int64_t>(o.byte_offsets.size())) {
        start = o.byte_offsets[file_index_];
      }
      // Compressed streams cannot seek: skip records up to the offset.
      while (static_cast<int64_t>(records_->offset()) < start) {
        absl::StatusOr<std::string> skipped = records_->ReadRecord();
        if (absl::IsOutOfRange(skipped.status())) break;
        if (!skipped.ok()) return skipped.status();
      }
      open_ = true;
      return absl::OkStatus();
    }
    if (o.compression != RecordCompression::kNone) {
      return absl::UnimplementedError(absl::StrCat(
          Name(), " reads uncompressed files only; '", path(), "' was declared ",
          RecordCompressionName(o.compression)));
    }
    file_.reset(std::fopen(path().c_str(), "rb"));
    if (file_ == nullptr) {
      const int err = errno;
      std::string msg = absl::StrCat(path(), ": ", std::strerror(err));
      return err == ENOENT ? absl::NotFoundError(msg) : absl::PermissionDeniedError(msg);
    }
    if (o.format == FileFormat::kFixedLength) {
      std::fseek(file_.get(), 0, SEEK_END);
      file_size_ = std::ftell(file_.get());
      if (offset == 0) offset = o.header_bytes;
    }
    if (std::fseek(file_.get(), offset, SEEK_SET) != 0) {
      return absl::DataLossError(absl::StrCat(path(), ": cannot seek to ", offset));
    }
    open_ = true;
    return absl::OkStatus();
  }

  std::string Name() const { return dataset()->Name() + "Dataset"; }

  void CloseFile() {
    records_.reset();
    file_.reset();
    open_ = false;
  }

  int64_t Offset() const {
    if (records_ != nullptr) return static_cast<int64_t>(records_->offset());
    return std::ftell(file_.get());
  }

  // One record into `record`; false at the end of the file.
  absl::StatusOr<bool> ReadOne(std::string* record) {
    const FileOptions& o = dataset()->options();
    switch (o.format) {
      case FileFormat::kTFRecord: {
        absl::StatusOr<std::string> r = records_->ReadRecord();
        if (absl::IsOutOfRange(r.status())) return false;
        if (!r.ok()) return r.status();
        *record = *std::move(r);
        return true;
      }
      case FileFormat::kTextLine: {
        record->clear();
        int c;
        bool any = false;
        while ((c = std::fgetc(file_.get())) != EOF) {
          any = true;
          if (c == '\n') break;
          record->push_back(static_cast<char>(c));
        }
        if (!any) return false;
        if (!record->empty() && record->back() == '\r') record->pop_back();
        return true;
      }
      case FileFormat::kFixedLength: {
        const int64_t pos = std::ftell(file_.get());
        if (pos + o.record_bytes > file_size_ - o.footer_bytes) return false;
        record->resize(o.record_bytes);
        if (std::fread(record->data(), 1, o.record_bytes, file_.get()) !=
            static_cast<size_t>(o.record_bytes)) {
          return absl::DataLossError(
              absl::StrCat(path(), ": short read of a record at offset ", pos));
        }
        return true;
      }
    }
    return false;
  }

  int64_t file_index_ = 0;
  bool open_ = false;
  std::unique_ptr<RecordReader> records_;
  FilePtr file_;
  int64_t file_size_ = 0;
};

std::unique_ptr<IteratorBase> FilesDataset::MakeIteratorInternal(std::string prefix) const {
  return std::make_unique<FilesIterator>(SharedAs<FilesDataset>(), std::move(prefix));
}

absl::StatusOr<RecordCompression> CompressionInput(OpKernelContext* ctx, int i) {
  const Tensor& t = ctx->input(i);
  if (t.dtype() != DT_STRING || t.dims() != 0) {
    return absl::InvalidArgumentError("compression_type must be a string scalar");
  }
  return ParseRecordCompression(t.scalar<std::string>());
}

absl::StatusOr<std::vector<std::string>> Filenames(OpKernelContext* ctx) {
  ASSIGN_OR_RETURN(std::vector<std::string> files, StringsInput(ctx, 0, "filenames"));
  for (const std::string& f : files) {
    if (f.empty()) return absl::InvalidArgumentError("filenames holds an empty file name");
  }
  return files;
}

// TFRecordDataset, TFRecordDatasetV2 (with byte_offsets) and TextLineDataset.
template <FileFormat kFormat, bool kOffsets>
class RecordFilesOp : public DatasetOpKernel {
  absl::StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(std::vector<std::string> files, Filenames(ctx));
    FileOptions o;
    o.format = kFormat;
    ASSIGN_OR_RETURN(o.compression, CompressionInput(ctx, 1));
    ASSIGN_OR_RETURN(int64_t buffer_size, Int64Input(ctx, 2, "buffer_size"));
    if (buffer_size < -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer_size must be -1 (the default), 0 or positive, got ", buffer_size));
    }
    if (kOffsets) {
      const Tensor& offsets = ctx->input(3);
      if (offsets.dtype() != DT_INT64 || offsets.dims() > 1) {
        return absl::InvalidArgumentError("byte_offsets must be an int64 scalar or vector");
      }
      for (int64_t v : offsets.flat<int64_t>()) {
        if (v < 0) return absl::InvalidArgumentError("byte_offsets must be non-negative");
        o.byte_offsets.push_back(v);
      }
      if (!o.byte_offsets.empty() && o.byte_offsets.size() != files.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "byte_offsets has ", o.byte_offsets.size(), " entries for ", files.size(), " files"));
      }
    }
    return std::make_shared<FilesDataset>(node(), std::move(files), std::move(o));
  }
};

template <bool kV2>
class FixedLengthOp : public DatasetOpKernel {
  absl::StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(std::vector<std::string> files, Filenames(ctx));
    FileOptions o;
    o.format = FileFormat::kFixedLength;
    ASSIGN_OR_RETURN(o.header_bytes, Int64Input(ctx, 1, "header_bytes"));
    ASSIGN_OR_RETURN(o.record_bytes, Int64Input(ctx, 2, "record_bytes"));
    ASSIGN_OR_RETURN(o.footer_bytes, Int64Input(ctx, 3, "footer_bytes"));
    if (o.header_bytes < 0 || o.footer_bytes < 0) {
      return absl::InvalidArgumentError("header_bytes and footer_bytes must be non-negative");
    }
    if (o.record_bytes <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("record_bytes must be positive, got ", o.record_bytes));
    }
    if (kV2) {
      ASSIGN_OR_RETURN(o.compression, CompressionInput(ctx, 5));
    }
    return std::make_shared<FilesDataset>(node(), std::move(files), std::move(o));
  }
};

}  // namespace

namespace internal {
void RegisterFileDatasetKernels(KernelRegistry* kernels) {
  kernels->Register<RecordFilesOp<FileFormat::kTFRecord, false>>(
      KernelDef("TFRecordDataset", kDeviceTypeCpu));
  kernels->Register<RecordFilesOp<FileFormat::kTFRecord, true>>(
      KernelDef("TFRecordDatasetV2", kDeviceTypeCpu));
  kernels->Register<RecordFilesOp<FileFormat::kTextLine, false>>(
      KernelDef("TextLineDataset", kDeviceTypeCpu));
  kernels->Register<FixedLengthOp<false>>(KernelDef("FixedLengthRecordDataset", kDeviceTypeCpu));
  kernels->Register<FixedLengthOp<true>>(KernelDef("FixedLengthRecordDatasetV2", kDeviceTypeCpu));
}
}  // namespace internal

}  // namespace data
}  // namespace sluice
