// Turns the JSON of `layoutcheck_bench --benchmark_repetitions=R` into the
// Markdown table of bench/results/<host>.md (scripts/bench.sh runs it):
//
//   bench_report RESULTS.json HOST_INFO.txt HOST [BELOW_GOAL.txt] > bench/results/HOST.md
//
// Every row's ratio to the memcpy of its group is computed per repetition (the
// memcpy and the row of the same repetition) and the median of those ratios is
// reported, for the wall-clock time and for the CPU time of the process (the
// latter is what a loaded host still measures fairly). Each row has the goal
// of its kind; a row that misses it is marked, never dropped. MegEngine rows are
// also compared with oneDNN's reorder of the same case in the same run.
// BELOW_GOAL.txt (bench/below_goal.txt) says why a row falls short where it
// does: "ROW | reason" lines ('#' starts a comment); the report lists every
// missed row with its reason, or says that none is recorded.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

struct Sample {
  std::map<int, double> real, cpu;  // repetition -> seconds per iteration
  std::map<int, double> bandwidth;  // repetition -> bytes per second (real time)
  // repetition -> seconds per iteration of the memcpy paired with the row (same
  // buffers, interleaved with it: bench::run_paired); empty if none.
  std::map<int, double> memcpy_real, memcpy_cpu;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// What follows a row's name in bench/below_goal.txt for its speed-up over oneDNN.
const std::string kVsOnednn = " vs oneDNN";

// The goal of a row, as a ratio to memcpy (issue "Fast on every host", 1.):
// small and in-cache cases 0.3; plain blocked copies 0.9; NVDLA feature, TLA
// fractals, HTP croutons and the MegEngine blocked formats 0.6; other packs and
// unpacks of 16 MiB or more 0.5. 0 = no goal (reference, peer libraries).
double goal_of(const std::string& group, const std::string& impl) {
  if (impl != "optimized") return 0;
  if (starts_with(group, "precision.")) return 0;
  const bool small = contains(group, "KiB") || contains(group, "/1MiB") || contains(group, "256x") ||
                     starts_with(group, "nvdla.weight") || starts_with(group, "nvdla.pixel") ||
                     starts_with(group, "nvdla.sdp") || starts_with(group, "nvdla.sparse");
  if (small) return 0.3;
  if (starts_with(group, "tpu.") || starts_with(group, "htp.depth32") || contains(group, "1x1xC")) return 0.9;
  if (starts_with(group, "nvdla.feature") || starts_with(group, "htp.crouton") || starts_with(group, "mge.") ||
      starts_with(group, "tla.nZ") || starts_with(group, "tla.zN") || starts_with(group, "tla.zZ") ||
      starts_with(group, "tla.nN")) {
    return 0.6;
  }
  return 0.5;
}

// Reads "ROW | reason" lines (a row below its memcpy goal) and "ROW vs oneDNN
// | reason" lines (a row below 1.2x oneDNN) into notes, keyed by what stands
// before the bar; false (with the message in error) on a line that is not of
// either form or a key named twice.
bool read_notes(const char* path, std::map<std::string, std::string>* notes, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = std::string("cannot read ") + path;
    return false;
  }
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    const size_t bar = line.find(" | ");
    const std::string row = bar == std::string::npos ? "" : line.substr(0, bar);
    const std::string reason = bar == std::string::npos ? "" : line.substr(bar + 3);
    const std::string where = std::string(path) + ":" + std::to_string(number) + ": ";
    const std::string name = ends_with(row, kVsOnednn) ? row.substr(0, row.size() - kVsOnednn.size()) : row;
    if (name.empty() || reason.empty() || name.find(' ') != std::string::npos) {
      *error = where + "not 'ROW | reason' or 'ROW vs oneDNN | reason': " + line;
      return false;
    }
    if (!notes->emplace(row, reason).second) {
      *error = where + "row " + row + " is named twice";
      return false;
    }
  }
  return true;
}

std::string fixed(double v, int digits = 3) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// v with `digits` decimals, or more (up to 6) where fewer would round it
// across `goal` (0.8996 against 0.9 reads 0.8996, not 0.900).
std::string fixed_against(double v, double goal, int digits = 3) {
  std::string s = fixed(v, digits);
  while (digits < 6 && (std::stod(s) >= goal) != (v >= goal)) s = fixed(v, ++digits);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: bench_report RESULTS.json HOST_INFO.txt HOST [BELOW_GOAL.txt]\n");
    return 2;
  }
  std::map<std::string, std::string> notes;  // row -> why it is below its goal
  if (std::string error; argc == 5 && !read_notes(argv[4], &notes, &error)) {
    std::fprintf(stderr, "bench_report: %s\n", error.c_str());
    return 1;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "bench_report: cannot read %s\n", argv[1]);
    return 1;
  }
  nlohmann::json doc;
  try {
    in >> doc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_report: %s is not JSON: %s\n", argv[1], e.what());
    return 1;
  }
  std::ifstream info_in(argv[2]);
  std::stringstream info;
  info << info_in.rdbuf();

  // name (without /real_time) -> samples; names in the order they were
  // registered (google benchmark's family_index and the instance within the
  // family), or, without those, in the order of the file: with repetitions
  // interleaved at random, the file has each row once all of its are done.
  std::map<std::string, Sample> rows;
  std::vector<std::string> order;
  std::map<std::string, std::pair<int64_t, int64_t>> registered;
  int repetitions = 0;
  for (const auto& b : doc.value("benchmarks", nlohmann::json::array())) {
    if (b.value("run_type", "") != "iteration" || b.value("error_occurred", false)) continue;
    std::string name = b.value("run_name", b.value("name", ""));
    if (size_t p = name.find("/real_time"); p != std::string::npos) name.resize(p);
    const std::string unit = b.value("time_unit", "ns");
    const double scale = unit == "s" ? 1 : unit == "ms" ? 1e-3 : unit == "us" ? 1e-6 : 1e-9;
    const int rep = b.value("repetition_index", 0);
    repetitions = std::max(repetitions, rep + 1);
    if (!rows.count(name)) order.push_back(name);
    if (b.contains("family_index")) {
      registered[name] = {b.value("family_index", int64_t{0}), b.value("per_family_instance_index", int64_t{0})};
    }
    Sample& s = rows[name];
    s.real[rep] = b.value("real_time", 0.0) * scale;
    s.cpu[rep] = b.value("cpu_time", 0.0) * scale;
    s.bandwidth[rep] = b.value("bytes_per_second", 0.0);
    if (b.contains("memcpy_real") && b.contains("memcpy_cpu")) {
      s.memcpy_real[rep] = b.value("memcpy_real", 0.0);
      s.memcpy_cpu[rep] = b.value("memcpy_cpu", 0.0);
    }
  }

  if (registered.size() == order.size()) {
    std::stable_sort(order.begin(), order.end(),
                     [&](const std::string& a, const std::string& b) { return registered.at(a) < registered.at(b); });
  }

  // A row's speed against memcpy in one repetition: the time of the memcpy
  // paired with the row if it has one, else of its group's memcpy row, over the
  // time of the row.
  auto memcpy_ratios = [&](const Sample& group_memcpy, const Sample& row, bool cpu) {
    std::map<int, double> r;
    const auto& paired = cpu ? row.memcpy_cpu : row.memcpy_real;
    const auto& bt = paired.empty() ? (cpu ? group_memcpy.cpu : group_memcpy.real) : paired;
    for (const auto& [rep, t] : cpu ? row.cpu : row.real) {
      auto it = bt.find(rep);
      if (it != bt.end() && t > 0) r[rep] = it->second / t;
    }
    return r;
  };
  // The median over repetitions of a row's ratio to memcpy.
  auto ratio = [&](const Sample& group_memcpy, const Sample& row, bool cpu) {
    std::vector<double> r;
    for (const auto& [rep, v] : memcpy_ratios(group_memcpy, row, cpu)) r.push_back(v);
    return median(r);
  };
  // The median over repetitions of how much faster `row` is than `peer`: the
  // quotient of their ratios to memcpy in the same repetition, so that a host
  // slower during one of the two measurements does not decide it.
  auto speedup_over = [&](const Sample& group_memcpy, const Sample& peer, const Sample& row, bool cpu) {
    const auto mine = memcpy_ratios(group_memcpy, row, cpu), theirs = memcpy_ratios(group_memcpy, peer, cpu);
    std::vector<double> r;
    for (const auto& [rep, v] : mine) {
      auto it = theirs.find(rep);
      if (it != theirs.end() && it->second > 0) r.push_back(v / it->second);
    }
    return median(r);
  };

  const auto& ctx = doc.value("context", nlohmann::json::object());
  std::ostringstream md;
  md << "# Benchmark results: " << argv[3] << "\n\n";
  md << "Written by `scripts/bench.sh` (" << ctx.value("date", "") << "): `layoutcheck_bench` with "
     << repetitions << " repetitions, OMP_NUM_THREADS=1, one thread per conversion except in the `threads/` groups "
     << "(1 thread and every core, oneDNN with the same count beside, and `stream-copy`: a copy of the same bytes with "
     << "non-temporal stores by as many threads, the memory's ceiling for a conversion that streams its output; read "
     << "their wall ratios). Each ratio is the median over the "
     << "repetitions of (time of a memcpy of the same bytes between the row's own buffers, run as many times, "
     << "interleaved with the row in slices of a few milliseconds, each slice of either started by one untimed run "
     << "so that each is timed in the cache state it leaves itself) / (time of the row): 1.0 is memcpy speed, and a "
     << "shared host's load, which comes and goes, slows both alike. Every "
     << "buffer starts on a 64-byte cache line, as a tensor allocator's do. `cpu` ratios use the measuring thread's "
     << "CPU time, `wall` ratios the real time; on a loaded host (load average below) the CPU-time ratio is the "
     << "fairer one. The goal column is the ratio the row must reach; **MISS** marks a row below it. A speed-up "
     << "over oneDNN is the quotient of the two rows' ratios to memcpy in the same repetition.\n\n";
  md << "## Host\n\n```\n" << info.str() << "```\n\n";
  if (ctx.contains("load_avg")) {
    md << "Load average during the run: " << ctx["load_avg"].dump() << " on " << ctx.value("num_cpus", 0)
       << " CPUs.\n\n";
  }

  // memcpy bandwidth per group size.
  md << "## memcpy bandwidth (each group's memcpy row, median over repetitions)\n\n| group | GB/s |\n|---|---|\n";
  for (const auto& name : order) {
    if (name.size() < 7 || name.compare(name.size() - 7, 7, "/memcpy") != 0) continue;
    std::vector<double> bw;
    for (const auto& [rep, v] : rows[name].bandwidth) bw.push_back(v);
    md << "| " << name.substr(0, name.size() - 7) << " | " << fixed(median(bw) / 1e9, 1) << " |\n";
  }

  md << "\n## Ratios to memcpy\n\n| row | cpu | wall | goal | met | oneDNN cpu | vs oneDNN (goal 1.2) |\n"
     << "|---|---|---|---|---|---|---|\n";
  int missed = 0, measured = 0, dnn_missed = 0;
  struct Family {
    int rows = 0, met = 0;
    std::string worst;
    double worst_share = 1e9;  // ratio / goal of the worst row
  };
  std::map<std::string, Family> families;
  std::vector<double> onednn_speedups;
  std::vector<std::string> below;  // "row (cpu X, goal Y): reason" of each missed memcpy goal
  std::vector<std::string> below_dnn;  // "row (Sx, oneDNN at X of memcpy): reason" of each missed 1.2x
  for (const auto& name : order) {
    if (name.size() >= 7 && name.compare(name.size() - 7, 7, "/memcpy") == 0) continue;
    // The group is the longest prefix with a memcpy row; then OPERATION/IMPL.
    std::string group = name, base;
    while (true) {
      size_t slash = group.rfind('/');
      if (slash == std::string::npos) break;
      group.resize(slash);
      if (rows.count(group + "/memcpy")) {
        base = group + "/memcpy";
        break;
      }
    }
    if (base.empty()) continue;
    const std::string rest = name.substr(group.size() + 1);  // "pack/optimized"
    const std::string impl = rest.substr(rest.rfind('/') + 1);
    if (starts_with(impl, "onednn")) continue;  // reported beside the row it is a peer of
    const double cpu = ratio(rows[base], rows[name], true);
    const double wall = ratio(rows[base], rows[name], false);
    const double goal = goal_of(group, impl);
    std::string met = "-";
    if (goal > 0) {
      ++measured;
      met = cpu >= goal ? "yes" : "**MISS**";
      if (cpu < goal) {
        ++missed;
        auto note = notes.find(name);
        below.push_back("`" + name + "` (" + fixed_against(cpu, goal) + ", goal " + fixed(goal, 1) + "): " +
                        (note != notes.end() ? note->second : "no reason recorded in bench/below_goal.txt"));
      }
      Family& f = families[group.substr(0, group.find('.'))];
      ++f.rows;
      f.met += cpu >= goal;
      if (cpu / goal < f.worst_share) {
        f.worst_share = cpu / goal;
        f.worst = name + " " + fixed_against(cpu, goal) + " (goal " + fixed(goal, 1) + ")";
      }
    }
    std::string dnn = "", vs = "";
    // The peer of pack/optimized is pack/onednn (CPU time); that of a threads
    // row pack/N-threads is pack/onednn-N-threads (wall time: the CPU time is
    // the calling thread's only).
    const bool threaded = starts_with(group, "threads/");
    const std::string peer =
        group + "/" + rest.substr(0, rest.rfind('/')) + (threaded ? "/onednn-" + impl : "/onednn");
    if ((impl == "optimized" || threaded) && rows.count(peer)) {
      dnn = fixed(ratio(rows[base], rows[peer], !threaded));
      const double speedup = speedup_over(rows[base], rows[peer], rows[name], !threaded);
      onednn_speedups.push_back(speedup);
      vs = fixed_against(speedup, 1.2, 2) + "x" + (speedup >= 1.2 ? "" : " **MISS**");
      if (speedup < 1.2) {
        ++dnn_missed;
        auto note = notes.find(name + kVsOnednn);
        below_dnn.push_back("`" + name + "` (" + fixed_against(speedup, 1.2, 2) + "x, oneDNN at " + dnn + " of memcpy): " +
                            (note != notes.end() ? note->second : "no reason recorded in bench/below_goal.txt"));
      }
    }
    md << "| " << name << " | " << (goal > 0 ? fixed_against(cpu, goal) : fixed(cpu)) << " | " << fixed(wall) << " | "
       << (goal > 0 ? fixed(goal, 1) : "-") << " | " << met << " | " << dnn << " | " << vs << " |\n";
  }
  md << "\n" << missed + dnn_missed << " goal(s) missed: " << missed << " of " << measured
     << " rows below their memcpy goal";
  if (!onednn_speedups.empty()) {
    md << ", " << dnn_missed << " of " << onednn_speedups.size() << " rows below 1.2x oneDNN; median speed-up over oneDNN "
       << fixed(median(onednn_speedups), 2) << "x (goal 2x)";
  }
  md << ".\n";
  md << "\n## Rows below their memcpy goal\n\n";
  if (below.empty()) md << "None.\n";
  for (const auto& b : below) md << "- " << b << "\n";
  if (!onednn_speedups.empty()) {
    md << "\n## Rows below 1.2x oneDNN\n\n";
    if (below_dnn.empty()) md << "None.\n";
    for (const auto& b : below_dnn) md << "- " << b << "\n";
  }
  // Per family, for the README (scripts/bench.sh copies this section there).
  md << "\n## Summary by family\n\n| family | rows with a goal | met | lowest row against its goal (cpu ratio) |\n"
     << "|---|---|---|---|\n";
  for (const auto& [family, f] : families) {
    md << "| " << family << " | " << f.rows << " | " << f.met << " | " << f.worst << " |\n";
  }
  if (!onednn_speedups.empty()) {
    md << "| mge vs oneDNN | " << onednn_speedups.size() << " | " << onednn_speedups.size() - dnn_missed
       << " | median speed-up " << fixed(median(onednn_speedups), 2) << "x (goals 1.2x each, 2x median) |\n";
  }
  std::cout << md.str();
  return 0;
}
