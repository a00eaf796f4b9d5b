#include "spec/catalog_index.hpp"

#include <algorithm>
#include <cstring>
#include <tuple>

namespace ftb {

// The generated table (build/generated/catalog_index_data.cpp).
extern const PrebuiltDocument kPrebuiltDocuments[];
extern const size_t kPrebuiltDocumentCount;

namespace {

// CBOR keeps a non-negative integer as unsigned; parse_yaml_source makes every integer a signed 64-bit one (a
// larger one becomes a double), so the decoded tree gets back the types the parser gives.
void restore_signed_integers(Json& j) {
    if (j.is_number_unsigned()) {
        j = static_cast<int64_t>(j.get<uint64_t>());
    } else if (j.is_structured()) {
        for (Json& child : j) restore_signed_integers(child);
    }
}

}  // namespace

size_t prebuilt_document_count() { return kPrebuiltDocumentCount; }

std::optional<Json> prebuilt_document(std::string_view text) {
    const uint64_t fingerprint = text_fingerprint(text);
    const PrebuiltDocument* end = kPrebuiltDocuments + kPrebuiltDocumentCount;
    const PrebuiltDocument* it = std::lower_bound(kPrebuiltDocuments, end, std::make_tuple(text.size(), fingerprint),
                                                  [](const PrebuiltDocument& d, const std::tuple<size_t, uint64_t>& key) {
                                                      return std::make_tuple(d.text_bytes, d.fingerprint) < key;
                                                  });
    for (; it != end && it->text_bytes == text.size() && it->fingerprint == fingerprint; ++it) {
        if (std::memcmp(it->text, text.data(), text.size()) != 0) continue;
        Json doc = Json::from_cbor(it->cbor, it->cbor + it->cbor_bytes);
        restore_signed_integers(doc);
        return doc;
    }
    return std::nullopt;
}

}  // namespace ftb
