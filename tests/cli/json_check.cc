// Reads a layoutcheck --json report on standard input and checks it against
// docs/json.md: valid JSON (so valid UTF-8), the header, totals and elapsed
// time as numbers, a repro line per failure. Exit 0 when it holds, 1 with the
// reasons otherwise.
//   layoutcheck check --json | json_check check
#include <nlohmann/json.hpp>

#include <iostream>
#include <iterator>
#include <string>

namespace {

int failures = 0;
void fail(const std::string& what) {
  std::cerr << "json_check: " << what << "\n";
  ++failures;
}

void expect(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

void check_totals(const nlohmann::json& j, std::initializer_list<const char*> keys) {
  if (!j.contains("totals") || !j["totals"].is_object()) return fail("no totals object");
  for (const char* k : keys) expect(j["totals"].contains(k) && j["totals"][k].is_number_unsigned(), std::string("totals.") + k + " is not a number");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: json_check COMMAND < report.json\n";
    return 2;
  }
  const std::string command = argv[1];
  const std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);  // rejects invalid UTF-8
  } catch (const nlohmann::json::exception& e) {
    std::cerr << "json_check: not valid JSON: " << e.what() << "\n";
    return 1;
  }
  if (!j.is_object()) {
    std::cerr << "json_check: not an object\n";
    return 1;
  }
  expect(j.value("schema", 0) == 1, "schema is not 1");
  expect(j.value("command", "") == command, "command is not " + command);
  expect(j.contains("layoutcheck_version") && j["layoutcheck_version"].is_string(), "no layoutcheck_version");
  expect(j.contains("abi_version") && j["abi_version"].is_string(), "no abi_version");
  if (command == "list") {
    expect(j.contains("layouts") && j["layouts"].is_array() && !j["layouts"].empty(), "no layouts");
    for (const auto& l : j.value("layouts", nlohmann::json::array())) {
      expect(l.value("parameters", nlohmann::json()).is_array(), "a layout's parameters is not an array");
      expect(l.value("defaults", nlohmann::json()).is_object(), "a layout's defaults is not an object");
    }
  } else if (command == "rules") {
    expect(j.contains("rules") && j["rules"].is_array() && !j["rules"].empty(), "no rules");
    for (const auto& r : j.value("rules", nlohmann::json::array())) {
      expect(r.value("id", "") != "" && r.value("text", "") != "", "a rule without its id or text");
      expect(r.value("layouts", nlohmann::json()).is_string(), "a rule's layouts is not a glob string");
    }
  } else if (command == "coverage") {
    expect(j.contains("items") && j["items"].is_array() && !j["items"].empty(), "no items");
    expect(j.contains("totals") && j["totals"].is_object() && j["totals"].value("items", nlohmann::json()).is_number_unsigned() &&
               j["totals"]["items"] == j["items"].size(),
           "totals.items is not the number of items");
    for (const auto& item : j.value("items", nlohmann::json::array())) {
      expect(item.value("oracles", nlohmann::json()).is_number_unsigned(), "an item's oracles is not a number");
      expect(item.value("reference", nlohmann::json()).is_boolean(), "an item's reference is not a boolean");
    }
  } else if (command == "describe") {
    expect(j.contains("facts") && j["facts"].is_object(), "no facts");
    if (j.contains("facts")) expect(j["facts"].value("size_bytes", nlohmann::json()).is_number_unsigned(), "size_bytes is not a number");
  } else if (command == "okk" || command == "tuple" || command == "sparse") {
    expect(j.contains("lib") && j["lib"].is_string(), "no lib");
    expect(j.value("status", "") == "passed" || j.value("status", "") == "failed", "status is neither passed nor failed");
    check_totals(j, {"functions", "passed", "failed", "not_provided"});
    expect(j.contains("functions") && j["functions"].is_array() && !j["functions"].empty(), "no functions");
    for (const auto& f : j.value("functions", nlohmann::json::array())) {
      expect(f.value("inputs", nlohmann::json()).is_number_unsigned(), "a function's inputs is not a number");
      if (f.value("status", "") != "failed") continue;
      const auto first = f.value("first_failure", nlohmann::json());
      expect(first.is_object() && first.value("expected", "") != "" && first.value("actual", "") != "",
             "a failed function without its first differing input");
    }
  } else if (command == "precision") {
    expect(j.contains("lib") && j["lib"].is_string(), "no lib");
    expect(j.value("status", "") == "passed" || j.value("status", "") == "failed", "status is neither passed nor failed");
    check_totals(j, {"tables", "passed", "failed"});
    expect(j.contains("tables") && j["tables"].is_array() && j["tables"].size() == 4, "not four tables");
    for (const auto& t : j.value("tables", nlohmann::json::array())) {
      expect(t.value("asked", nlohmann::json()).is_number_unsigned(), "a table's asked is not a number");
      if (t.value("status", "") != "failed") continue;
      expect(t.value("first_failure", nlohmann::json()).is_string(), "a failed table without its first differing row");
    }
    const auto layer = j.value("layer", nlohmann::json());
    expect(layer.is_object() && layer.value("function", "") == "nvdla_layer_supported", "no layer function report");
    const std::string layer_status = layer.is_object() ? layer.value("status", "") : "";
    expect(layer_status == "passed" || layer_status == "failed" || layer_status == "not provided",
           "the layer status is neither passed, failed nor not provided");
    expect(layer.is_object() && layer.value("asked", nlohmann::json()).is_number_unsigned() &&
               layer.value("failed", nlohmann::json()).is_number_unsigned(),
           "the layer report's asked or failed is not a number");
    if (layer_status == "failed") {
      const auto failures = layer.value("failures", nlohmann::json::array());
      expect(failures.is_array() && !failures.empty(), "a failed layer function without its disagreements");
      for (const auto& f : failures) {
        expect(f.value("repro", "").rfind("layoutcheck precision nvdla --lib ", 0) == 0, "a layer disagreement without a repro line");
      }
    }
  } else {
    expect(j.contains("impl") && j["impl"].is_string(), "no impl");
    expect(j.contains("seed") && (j["seed"].is_number_unsigned() || j["seed"].is_null()), "seed is neither a number nor null");
    expect(j.contains("elapsed_seconds") && j["elapsed_seconds"].is_number() && j["elapsed_seconds"].get<double>() >= 0,
           "elapsed_seconds is not a number");
    expect(j.value("status", "") == "passed" || j.value("status", "") == "failed", "status is neither passed nor failed");
    if (command == "check") {
      check_totals(j, {"layouts", "cases", "passed", "invalid", "declined", "skipped", "failed"});
      expect(j["seed"].is_number_unsigned(), "check: seed is not a number");
      for (const auto& l : j.value("layouts", nlohmann::json::array())) {
        if (l.value("failed", 0) == 0) continue;
        const auto f = l.value("failure", nlohmann::json());
        expect(f.is_object() && f.value("repro", "").rfind("layoutcheck repro ", 0) == 0,
               "a failed layout without a repro line");
      }
    } else {
      check_totals(j, {"cases", "passed", "failed"});
      expect(j.contains("cases") && j["cases"].is_array(), "no cases");
      for (const auto& c : j.value("cases", nlohmann::json::array())) {
        if (c.value("status", "") != "failed") continue;
        expect(c.value("repro", "").rfind("layoutcheck ", 0) == 0, "a failed case without a repro line");
      }
    }
  }
  return failures ? 1 : 0;
}
