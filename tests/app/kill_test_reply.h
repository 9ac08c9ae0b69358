// The answer app_kill_driver's FakeEngine streams; app_kill_test checks committed answers hold it.
#pragma once

inline constexpr const char* kKillTestReply =
    "Rivers of Bengal: the Padma (পদ্মা), the Meghna (মেঘনা) and the Jamuna (যমুনা) meet in the delta. "
    "এই নদীগুলো বাংলাদেশের প্রাণ। Each carries silt that builds new land every monsoon.";

// Messages in the conversation app_kill_driver imports again and again in its "import" mode.
inline constexpr int kImportMessages = 3000;
