#include "graph/attr_map_key.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace sluice {

std::string AttrMapKey(const AttrMap& attrs) {
  std::map<std::string, const AttrValue*> sorted;
  for (const auto& [name, value] : attrs) sorted[name] = &value;
  std::string key;
  for (const auto& [name, value] : sorted) {
    std::string bytes;
    {
      google::protobuf::io::StringOutputStream stream(&bytes);
      google::protobuf::io::CodedOutputStream coded(&stream);
      coded.SetSerializationDeterministic(true);
      value->SerializeToCodedStream(&coded);
    }
    absl::StrAppend(&key, "\n", name, "=", bytes.size(), ":", bytes);
  }
  return key;
}

}  // namespace sluice
