#include "console_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "fields.h"
#include "text.h"

namespace allocbench {
namespace {

std::string Grouped(double value) {
  std::string digits = std::to_string(static_cast<long long>(std::llround(value)));
  std::string out;
  const size_t start = digits[0] == '-' ? 1 : 0;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > start && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

std::string FormatValue(double value, const char* unit) {
  if (std::strcmp(unit, "ops/s") == 0) return Grouped(value);
  char buf[64];
  if (std::strcmp(unit, "ns") == 0) {
    std::snprintf(buf, sizeof buf, "%.1f", value);
  } else if (std::strcmp(unit, "") == 0) {
    std::snprintf(buf, sizeof buf, "%.3f", value);
  } else if (value == std::floor(value)) {
    std::snprintf(buf, sizeof buf, "%.0f", value);  // counts are exact: no spurious decimals
  } else {
    std::snprintf(buf, sizeof buf, "%.3f", value);
  }
  return buf;
}

std::string FormatTable(const nlohmann::json& results) {
  // The instructions pass is optional and slow: its column shows only when it ran.
  const bool instructions = std::any_of(results.begin(), results.end(), [](const auto& r) {
    return r.is_object() && r.contains("instructions") && r["instructions"].is_object();
  });
  std::vector<const Field*> columns;
  for (const Field& f : kFields) {
    if (f.column != nullptr && (instructions || f.section != Section::kInstructions)) {
      columns.push_back(&f);
    }
  }
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"scenario"});
  for (const Field* f : columns) rows[0].push_back(f->column);
  std::string notes;
  for (const nlohmann::json& r : results) {
    const std::string name = ForTerminal(r.value("name", ""));
    std::vector<std::string> row = {name};
    for (const Field* f : columns) {
      const nlohmann::json section = r.value(SectionName(f->section), nlohmann::json());
      const bool has =
          section.is_object() && section.contains(f->key) && section[f->key].is_number();
      row.push_back(has ? FormatValue(section[f->key].get<double>(), f->unit) : "-");
    }
    bool marked = false;
    for (const char* section : {"alloc", "instructions"}) {
      const nlohmann::json s = r.value(section, nlohmann::json());
      if (!s.is_object() || s.value("steady", true)) continue;
      if (!marked) row[0] += " *";
      marked = true;
      notes += "  * " + name + (section[0] == 'a' ? ": not steady: " : ": Ir/op not steady: ") +
               ForTerminal(s.value("steady_reason", "")) + "\n";
    }
    if (r.contains("error")) {
      row[0] += " !";
      notes += "  ! " + name + ": error: " + ForTerminal(r.value("error", "")) + "\n";
    }
    if (r.contains("note")) notes += "    " + name + ": " + ForTerminal(r.value("note", "")) + "\n";
    rows.push_back(std::move(row));
  }
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    std::string line;
    for (size_t i = 0; i < rows[r].size(); ++i) {
      const std::string& cell = rows[r][i];
      const std::string pad(widths[i] - cell.size(), ' ');
      line += i == 0 ? cell + pad : "  " + pad + cell;  // names left, numbers right
    }
    out += line + '\n';
    if (r == 0) out += std::string(line.size(), '-') + '\n';
  }
  return out + notes;
}

}  // namespace allocbench
