#pragma once
#include <string>
#include <vector>

namespace ftb { struct PredictedStep { double step_seconds; struct Item { std::string phase; double seconds; std::string resource; }; std::vector<Item> breakdown; std::string bottleneck; };
PredictedStep predict_step_for_job_file(const std::string& job_path, const std::vector<std::string>& overrides); }
