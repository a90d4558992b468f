#include "text.h"

#include <cstdint>
#include <cstdio>

namespace allocbench {
namespace {

// Length of the valid UTF-8 sequence starting at text[i], or 0 if there is none (overlong
// forms, surrogates and code points above U+10FFFF are invalid, as RFC 3629 says).
size_t SequenceLength(const std::string& text, size_t i, uint32_t* code_point) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  size_t length;
  uint32_t cp;
  if (lead < 0x80) {
    *code_point = lead;
    return 1;
  } else if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    cp = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    cp = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    cp = lead & 0x07;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min[length] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  *code_point = cp;
  return length;
}

bool IsControl(uint32_t cp) { return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F); }

std::string Hex(uint32_t value) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(value));
  return buf;
}

// Walks `text` sequence by sequence. `rewrite(cp, seq)` gets each valid sequence and returns
// what to write for it; each byte of an invalid sequence gets `invalid(byte)`.
template <class Invalid, class Rewriter>
std::string Rewrite(const std::string& text, Invalid invalid, Rewriter rewrite) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    const size_t n = SequenceLength(text, i, &cp);
    if (n == 0) {
      out += invalid(static_cast<unsigned char>(text[i]));
      ++i;
    } else {
      out += rewrite(cp, text.substr(i, n));
      i += n;
    }
  }
  return out;
}

const char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

std::string ValidUtf8(const std::string& text) {
  return Rewrite(
      text, [](unsigned char) { return std::string(kReplacement); },
      [](uint32_t, const std::string& seq) { return seq; });
}

std::string Escaped(const std::string& text) {
  return Rewrite(
      text, [](unsigned char b) { return Hex(b); },
      [](uint32_t cp, const std::string& seq) {
        if (cp == '\\') return std::string("\\\\");
        return IsControl(cp) ? Hex(cp) : seq;
      });
}

std::string PrintableProblem(const std::string& text) {
  bool invalid = false, control = false;
  Rewrite(
      text,
      [&](unsigned char) {
        invalid = true;
        return std::string();
      },
      [&](uint32_t cp, const std::string&) {
        control = control || IsControl(cp);
        return std::string();
      });
  if (invalid) return "is not valid UTF-8";
  if (control) return "has a control character";
  return "";
}

std::string ForTerminal(const std::string& text) {
  return Rewrite(
      text, [](unsigned char) { return std::string(kReplacement); },
      [](uint32_t cp, const std::string& seq) {
        return cp == '\n' || !IsControl(cp) ? seq : Hex(cp);
      });
}

}  // namespace allocbench
