#include "api_surface.h"

#include <algorithm>

namespace exactq::proto {

namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;

void AddEnum(const EnumDescriptor& e, std::vector<std::string>* out) {
  for (int i = 0; i < e.value_count(); ++i) {
    out->push_back("enum " + e.full_name() + "." + e.value(i)->name() + " = " + std::to_string(e.value(i)->number()));
  }
}

std::string TypeName(const FieldDescriptor& f) {
  if (f.message_type() != nullptr) return f.message_type()->full_name();
  if (f.enum_type() != nullptr) return f.enum_type()->full_name();
  return f.type_name();
}

void AddMessage(const Descriptor& m, std::vector<std::string>* out) {
  for (int i = 0; i < m.field_count(); ++i) {
    const FieldDescriptor& f = *m.field(i);
    std::string line = "field " + f.full_name() + " = " + std::to_string(f.number()) + " " + TypeName(f) + " " +
                       (f.is_repeated() ? "repeated" : "optional");
    if (f.containing_oneof() != nullptr) line += " oneof " + f.containing_oneof()->name();
    out->push_back(line);
  }
  for (int i = 0; i < m.nested_type_count(); ++i) AddMessage(*m.nested_type(i), out);
  for (int i = 0; i < m.enum_type_count(); ++i) AddEnum(*m.enum_type(i), out);
}

}  // namespace

std::vector<std::string> ApiSurface(const google::protobuf::FileDescriptor& file) {
  std::vector<std::string> out;
  out.push_back("package " + file.package());
  for (int i = 0; i < file.message_type_count(); ++i) AddMessage(*file.message_type(i), &out);
  for (int i = 0; i < file.enum_type_count(); ++i) AddEnum(*file.enum_type(i), &out);
  for (int s = 0; s < file.service_count(); ++s) {
    const auto& service = *file.service(s);
    for (int i = 0; i < service.method_count(); ++i) {
      const auto& m = *service.method(i);
      out.push_back("rpc " + m.full_name() + " " + (m.client_streaming() ? "stream " : "") +
                    m.input_type()->full_name() + " -> " + (m.server_streaming() ? "stream " : "") +
                    m.output_type()->full_name());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace exactq::proto
