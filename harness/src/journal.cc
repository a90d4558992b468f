#include "journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <utility>

#include "results_json.h"

namespace allocbench {

using nlohmann::json;

Journal::Journal(std::string path, json context)
    : Journal(std::move(path), Header{ResultsDocument(context, json::array(), false)}) {}

Journal::Journal(std::string path, Header header)
    : path_(std::move(path)), header_(std::move(header.document)) {
  header_["journal"] = true;
}

Journal::~Journal() {
  if (fd_ >= 0) close(fd_);
}

void Journal::Append(const json& result) {
  if (path_.empty()) return;
  if (fd_ < 0) {
    const std::string first = Dump(header_) + "\n";
    WriteFileAtomically(path_, first);
    fd_ = open(path_.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd_ < 0) FailWrite(path_, "open", errno);
    size_ = static_cast<off_t>(first.size());
  }
  const std::string line = Dump(result) + "\n";
  ssize_t n;
  while ((n = write(fd_, line.data(), line.size())) < 0 && errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(line.size())) {
    const int err = n < 0 ? errno : ENOSPC;  // a short write to a file: the disk is full
    // Not half a line for the next one to follow: the file is left as before this entry.
    if (ftruncate(fd_, size_) != 0) {
      // nothing more to do: the error says what failed
    }
    FailWrite(path_, "write", err);
  }
  if (fdatasync(fd_) != 0) FailWrite(path_, "sync", errno);
  size_ += static_cast<off_t>(line.size());
}

void Journal::Remove() {
  if (fd_ < 0) return;
  close(fd_);
  fd_ = -1;
  unlink(path_.c_str());
}

json ReadResults(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  std::string first;
  std::getline(in, first);
  json doc = json::parse(first, nullptr, false);
  const bool journal = doc.is_object() && doc.value("journal", false) && !in.eof();
  if (!journal) {  // a document written whole (or a journal cut inside its first line)
    in.clear();
    in.seekg(0);
    doc = json::parse(in, nullptr, false);
  } else {
    doc.erase("journal");
    for (std::string line; std::getline(in, line) && !in.eof();) {
      doc["results"].push_back(json::parse(line, nullptr, false));
    }
  }
  if (!doc.is_object() || !doc.contains("results") || !doc.at("results").is_array()) {
    return nullptr;
  }
  return doc;
}

}  // namespace allocbench
