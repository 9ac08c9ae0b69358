<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="bn_BD">
<context>
    <name>CachePlot</name>
    <message>
        <source>Cache bytes over generated tokens</source>
        <translation>তৈরি হওয়া টোকেনের সঙ্গে ক্যাশের বাইট</translation>
    </message>
</context>
<context>
    <name>ChatHeader</name>
    <message>
        <source>Loading…</source>
        <translation>লোড হচ্ছে…</translation>
    </message>
    <message>
        <source>No model loaded</source>
        <translation>কোনো মডেল লোড করা নেই</translation>
    </message>
    <message>
        <source>Models</source>
        <translation>মডেল</translation>
    </message>
    <message>
        <source>Choose and load a model</source>
        <translation>একটি মডেল বেছে নিয়ে লোড করুন</translation>
    </message>
    <message>
        <source>Models (Ctrl+L)</source>
        <translation>মডেল (Ctrl+L)</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>সেটিংস</translation>
    </message>
    <message>
        <source>Open the settings</source>
        <translation>সেটিংস খুলুন</translation>
    </message>
    <message>
        <source>Settings (Ctrl+,)</source>
        <translation>সেটিংস (Ctrl+,)</translation>
    </message>
</context>
<context>
    <name>ChatView</name>
    <message>
        <source>Messages</source>
        <translation>বার্তাগুলো</translation>
    </message>
    <message>
        <source>Say hello: type a message below.</source>
        <translation>নমস্কার বলুন: নিচে একটি বার্তা লিখুন।</translation>
    </message>
</context>
<context>
    <name>CodeBlock</name>
    <message>
        <source>code</source>
        <translation>কোড</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>কপি</translation>
    </message>
    <message>
        <source>Copy the code</source>
        <translation>কোডটি কপি করুন</translation>
    </message>
    <message>
        <source>Code</source>
        <translation>কোড</translation>
    </message>
</context>
<context>
    <name>Composer</name>
    <message>
        <source>Message</source>
        <translation>বার্তা</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>পাঠান</translation>
    </message>
    <message>
        <source>Send the message</source>
        <translation>বার্তাটি পাঠান</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>থামান</translation>
    </message>
    <message>
        <source>Stop the answer (Esc)</source>
        <translation>উত্তর থামান (Esc)</translation>
    </message>
</context>
<context>
    <name>ConversationDelegate</name>
    <message>
        <source>%1, pinned</source>
        <translation>%1, পিন করা</translation>
    </message>
    <message>
        <source>Untitled chat</source>
        <translation>শিরোনামহীন চ্যাট</translation>
    </message>
    <message>
        <source>Pinned</source>
        <translation>পিন করা</translation>
    </message>
    <message>
        <source>Actions for %1</source>
        <translation>%1-এর কাজ</translation>
    </message>
    <message>
        <source>Rename…</source>
        <translation>নাম বদলান…</translation>
    </message>
    <message>
        <source>Unpin</source>
        <translation>পিন সরান</translation>
    </message>
    <message>
        <source>Pin</source>
        <translation>পিন করুন</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>মুছুন</translation>
    </message>
    <message>
        <source>Rename chat</source>
        <translation>চ্যাটের নাম বদলান</translation>
    </message>
    <message>
        <source>New title</source>
        <translation>নতুন শিরোনাম</translation>
    </message>
</context>
<context>
    <name>ConversationSidebar</name>
    <message>
        <source>New chat</source>
        <translation>নতুন চ্যাট</translation>
    </message>
    <message>
        <source>Start a new chat</source>
        <translation>নতুন চ্যাট শুরু করুন</translation>
    </message>
    <message>
        <source>New chat (Ctrl+N)</source>
        <translation>নতুন চ্যাট (Ctrl+N)</translation>
    </message>
    <message>
        <source>Search all chats (Ctrl+F)</source>
        <translation>সব চ্যাটে খুঁজুন (Ctrl+F)</translation>
    </message>
    <message>
        <source>Search all chats</source>
        <translation>সব চ্যাটে খুঁজুন</translation>
    </message>
    <message>
        <source>Conversations</source>
        <translation>কথোপকথন</translation>
    </message>
    <message>
        <source>Your chats will appear here.</source>
        <translation>আপনার চ্যাটগুলো এখানে দেখা যাবে।</translation>
    </message>
    <message>
        <source>Search results</source>
        <translation>খোঁজের ফল</translation>
    </message>
    <message>
        <source>No matches</source>
        <translation>কিছু মেলেনি</translation>
    </message>
</context>
<context>
    <name>HistoryBanner</name>
    <message>
        <source>Save a backup copy</source>
        <translation>একটি ব্যাকআপ কপি রাখুন</translation>
    </message>
</context>
<context>
    <name>Main</name>
    <message>
        <source>Undo</source>
        <translation>ফিরিয়ে আনুন</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>বন্ধ করুন</translation>
    </message>
</context>
<context>
    <name>MemoryMeter</name>
    <message>
        <source>%1 saves %2% against f16</source>
        <translation>f16-এর তুলনায় %1 %2% জায়গা বাঁচায়</translation>
    </message>
    <message>
        <source>Free system memory</source>
        <translation>খালি সিস্টেম মেমরি</translation>
    </message>
    <message>
        <source>not supported</source>
        <translation>সমর্থিত নয়</translation>
    </message>
    <message numerus="yes">
        <source>%Ln tokens</source>
        <translation>
            <numerusform>%Ln টোকেন</numerusform>
            <numerusform>%Ln টোকেন</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 of %2 tokens</source>
        <translation>%2 টোকেনের মধ্যে %1</translation>
    </message>
</context>
<context>
    <name>MemoryPanel</name>
    <message>
        <source>Memory meter</source>
        <translation>মেমরি মিটার</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>মেমরি</translation>
    </message>
    <message>
        <source>Load a model to see how much memory its cache takes.</source>
        <translation>মডেলের ক্যাশ কতটা মেমরি নেয় দেখতে একটি মডেল লোড করুন।</translation>
    </message>
    <message>
        <source>KV cache (%1)</source>
        <translation>KV ক্যাশ (%1)</translation>
    </message>
    <message>
        <source>K in f16</source>
        <translation>f16-এ K</translation>
    </message>
    <message>
        <source>K in %1</source>
        <translation>%1-এ K</translation>
    </message>
    <message>
        <source>V in f16</source>
        <translation>f16-এ V</translation>
    </message>
    <message>
        <source>V in %1</source>
        <translation>%1-এ V</translation>
    </message>
    <message>
        <source>Cache size against f16</source>
        <translation>f16-এর তুলনায় ক্যাশের আকার</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>ওয়েট</translation>
    </message>
    <message>
        <source>Free memory would still hold</source>
        <translation>খালি মেমরিতে আরও যতটা ধরবে</translation>
    </message>
    <message>
        <source>Context</source>
        <translation>কনটেক্সট</translation>
    </message>
    <message>
        <source>Context used</source>
        <translation>ব্যবহৃত কনটেক্সট</translation>
    </message>
    <message>
        <source>The context is nearly full: the oldest turns will soon be dropped. Start a new chat to keep everything.</source>
        <translation>কনটেক্সট প্রায় ভরে গেছে: সবচেয়ে পুরোনো কথাগুলো শিগগিরই বাদ পড়বে। সব রাখতে নতুন চ্যাট শুরু করুন।</translation>
    </message>
    <message>
        <source>Cache over this answer</source>
        <translation>এই উত্তরে ক্যাশ</translation>
    </message>
</context>
<context>
    <name>MessageDelegate</name>
    <message>
        <source>You</source>
        <translation>আপনি</translation>
    </message>
    <message>
        <source>Alap</source>
        <translation>আলাপ</translation>
    </message>
    <message>
        <source>Answering</source>
        <translation>উত্তর দিচ্ছে</translation>
    </message>
    <message>
        <source>Edit your message</source>
        <translation>আপনার বার্তা সম্পাদনা করুন</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>থামানো হয়েছে</translation>
    </message>
    <message>
        <source>Error: %1</source>
        <translation>ত্রুটি: %1</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>কপি</translation>
    </message>
    <message>
        <source>Copy this message</source>
        <translation>এই বার্তাটি কপি করুন</translation>
    </message>
    <message>
        <source>Edit</source>
        <translation>সম্পাদনা</translation>
    </message>
    <message>
        <source>Edit and resend this message</source>
        <translation>এই বার্তাটি সম্পাদনা করে আবার পাঠান</translation>
    </message>
    <message>
        <source>Save and resend</source>
        <translation>সংরক্ষণ করে আবার পাঠান</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>বাতিল</translation>
    </message>
    <message>
        <source>Cancel editing</source>
        <translation>সম্পাদনা বাতিল করুন</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>আবার তৈরি করুন</translation>
    </message>
    <message>
        <source>Regenerate this answer</source>
        <translation>এই উত্তরটি আবার তৈরি করুন</translation>
    </message>
</context>
<context>
    <name>MessageListModel</name>
    <message numerus="yes">
        <source>%Ln tokens</source>
        <translation>
            <numerusform>%Ln টোকেন</numerusform>
            <numerusform>%Ln টোকেন</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 tokens/s</source>
        <translation>%1 টোকেন/সে</translation>
    </message>
    <message>
        <source>first token %1 s</source>
        <translation>প্রথম টোকেন %1 সে</translation>
    </message>
</context>
<context>
    <name>ModelFileDelegate</name>
    <message>
        <source>Loaded</source>
        <translation>লোড হয়েছে</translation>
    </message>
    <message>
        <source>Load</source>
        <translation>লোড করুন</translation>
    </message>
    <message>
        <source>Load %1</source>
        <translation>%1 লোড করুন</translation>
    </message>
</context>
<context>
    <name>ModelPicker</name>
    <message>
        <source>Models</source>
        <translation>মডেল</translation>
    </message>
    <message>
        <source>Choose the models folder</source>
        <translation>মডেলের ফোল্ডার বেছে নিন</translation>
    </message>
    <message>
        <source>Models folder</source>
        <translation>মডেলের ফোল্ডার</translation>
    </message>
    <message>
        <source>A folder with .gguf files</source>
        <translation>.gguf ফাইলসহ একটি ফোল্ডার</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>খুঁজে দেখুন…</translation>
    </message>
    <message>
        <source>Browse for the models folder</source>
        <translation>মডেলের ফোল্ডার খুঁজে নিন</translation>
    </message>
    <message>
        <source>Model files</source>
        <translation>মডেল ফাইল</translation>
    </message>
    <message>
        <source>Choose a folder to see its models.</source>
        <translation>মডেলগুলো দেখতে একটি ফোল্ডার বেছে নিন।</translation>
    </message>
    <message>
        <source>No .gguf files in this folder.</source>
        <translation>এই ফোল্ডারে কোনো .gguf ফাইল নেই।</translation>
    </message>
    <message>
        <source>Loading progress</source>
        <translation>লোডের অগ্রগতি</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>বাতিল</translation>
    </message>
    <message>
        <source>Cancel loading</source>
        <translation>লোড করা বাতিল করুন</translation>
    </message>
    <message>
        <source>Loaded: %1</source>
        <translation>লোড হয়েছে: %1</translation>
    </message>
</context>
<context>
    <name>SettingsPage</name>
    <message>
        <source>Settings</source>
        <translation>সেটিংস</translation>
    </message>
    <message>
        <source>System prompt for this chat</source>
        <translation>এই চ্যাটের সিস্টেম প্রম্পট</translation>
    </message>
    <message>
        <source>For example: Answer briefly, in Bengali.</source>
        <translation>যেমন: সংক্ষেপে, বাংলায় উত্তর দাও।</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>সিস্টেম প্রম্পট</translation>
    </message>
    <message>
        <source>Sampling</source>
        <translation>স্যাম্পলিং</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>তাপমাত্রা</translation>
    </message>
    <message>
        <source>Top-k</source>
        <translation>টপ-k</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>টপ-p</translation>
    </message>
    <message>
        <source>Min-p</source>
        <translation>মিন-p</translation>
    </message>
    <message>
        <source>Repeat penalty</source>
        <translation>পুনরাবৃত্তির জরিমানা</translation>
    </message>
    <message>
        <source>Longest answer (tokens)</source>
        <translation>সবচেয়ে লম্বা উত্তর (টোকেন)</translation>
    </message>
    <message>
        <source>Reset sampling</source>
        <translation>স্যাম্পলিং আগের মতো করুন</translation>
    </message>
    <message>
        <source>Reset the sampling settings</source>
        <translation>স্যাম্পলিংয়ের সেটিংস আগের মতো করুন</translation>
    </message>
    <message>
        <source>Model loading (applies to the next load)</source>
        <translation>মডেল লোড (পরের লোড থেকে কার্যকর)</translation>
    </message>
    <message>
        <source>Context length</source>
        <translation>কনটেক্সটের দৈর্ঘ্য</translation>
    </message>
    <message>
        <source>Cache mode</source>
        <translation>ক্যাশ মোড</translation>
    </message>
    <message>
        <source>Threads (0: all cores)</source>
        <translation>থ্রেড (০: সব কোর)</translation>
    </message>
    <message>
        <source>GPU layers</source>
        <translation>GPU লেয়ার</translation>
    </message>
</context>
<context>
    <name>WelcomePage</name>
    <message>
        <source>Welcome to Alap</source>
        <translation>আলাপে স্বাগতম</translation>
    </message>
    <message>
        <source>Chat with language models on your own computer, offline. Load or download a model to begin.</source>
        <translation>নিজের কম্পিউটারেই, ইন্টারনেট ছাড়া, ভাষা মডেলের সঙ্গে কথা বলুন। শুরু করতে একটি মডেল লোড করুন বা নামিয়ে নিন।</translation>
    </message>
    <message>
        <source>Pick the folder that holds your .gguf model files.</source>
        <translation>যে ফোল্ডারে আপনার .gguf মডেল ফাইল আছে সেটি বেছে নিন।</translation>
    </message>
    <message>
        <source>Models folder: %1</source>
        <translation>মডেলের ফোল্ডার: %1</translation>
    </message>
    <message>
        <source>Choose a model…</source>
        <translation>একটি মডেল বেছে নিন…</translation>
    </message>
</context>
<context>
    <name>alap::app::ChatController</name>
    <message>
        <source>The history could not be saved: %1</source>
        <translation>ইতিহাস সংরক্ষণ করা গেল না: %1</translation>
    </message>
    <message>
        <source>A copy of the history was saved to %1</source>
        <translation>ইতিহাসের একটি কপি %1-এ রাখা হয়েছে</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>নতুন চ্যাট</translation>
    </message>
    <message>
        <source>Untitled chat</source>
        <translation>শিরোনামহীন চ্যাট</translation>
    </message>
    <message>
        <source>The history is read-only, so new messages cannot be saved.</source>
        <translation>ইতিহাস শুধু পড়া যায়, তাই নতুন বার্তা সংরক্ষণ করা যাবে না।</translation>
    </message>
    <message>
        <source>Loading the model…</source>
        <translation>মডেল লোড হচ্ছে…</translation>
    </message>
    <message>
        <source>Load a model to start chatting: choose one under Models.</source>
        <translation>চ্যাট শুরু করতে একটি মডেল লোড করুন: «মডেল» থেকে একটি বেছে নিন।</translation>
    </message>
    <message>
        <source>Answering… press Esc to stop.</source>
        <translation>উত্তর দিচ্ছে… থামাতে Esc চাপুন।</translation>
    </message>
    <message>
        <source>Message Alap (Enter sends, Shift+Enter adds a line)</source>
        <translation>আলাপকে লিখুন (Enter পাঠায়, Shift+Enter নতুন লাইন)</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>কপি হয়েছে</translation>
    </message>
    <message>
        <source>Deleted “%1”</source>
        <translation>“%1” মুছে ফেলা হয়েছে</translation>
    </message>
</context>
<context>
    <name>alap::app::EngineController</name>
    <message>
        <source>%1 · %2 parameters · context %3 · cache %4</source>
        <extracomment>model summary line: architecture, parameter count, context length, cache mode</extracomment>
        <translation>%1 · %2 প্যারামিটার · কনটেক্সট %3 · ক্যাশ %4</translation>
    </message>
    <message>
        <source>Starting</source>
        <translation>শুরু হচ্ছে</translation>
    </message>
    <message>
        <source>Reading the model</source>
        <translation>মডেল পড়া হচ্ছে</translation>
    </message>
    <message>
        <source>Preparing the tokenizer</source>
        <translation>টোকেনাইজার তৈরি হচ্ছে</translation>
    </message>
    <message>
        <source>Allocating the cache</source>
        <translation>ক্যাশের জায়গা নেওয়া হচ্ছে</translation>
    </message>
</context>
<context>
    <name>alap::app::StoreWorker</name>
    <message>
        <source>The history could not be opened for writing (%1). It is shown read-only and nothing will be written to it. You can make a backup copy.</source>
        <translation>ইতিহাস লেখার জন্য খোলা গেল না (%1)। এটি শুধু পড়ার জন্য দেখানো হচ্ছে, এতে কিছুই লেখা হবে না। আপনি একটি ব্যাকআপ কপি রাখতে পারেন।</translation>
    </message>
    <message>
        <source>The history could not be opened (%1). It was left untouched. You can make a backup copy.</source>
        <translation>ইতিহাস খোলা গেল না (%1)। ফাইলটিতে হাত দেওয়া হয়নি। আপনি একটি ব্যাকআপ কপি রাখতে পারেন।</translation>
    </message>
    <message>
        <source>The history database is not open.</source>
        <translation>ইতিহাসের ডেটাবেস খোলা নেই।</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>Offline chat with local language models</source>
        <translation>নিজের কম্পিউটারের ভাষা মডেলের সঙ্গে অফলাইন চ্যাট</translation>
    </message>
    <message>
        <source>Print the version and exit.</source>
        <translation>সংস্করণ দেখিয়ে বন্ধ করুন।</translation>
    </message>
    <message>
        <source>Quit after this many milliseconds (for tests).</source>
        <translation>এত মিলিসেকেন্ড পরে বন্ধ করুন (পরীক্ষার জন্য)।</translation>
    </message>
    <message>
        <source>Interface language (bn or en).</source>
        <translation>ইন্টারফেসের ভাষা (bn বা en)।</translation>
    </message>
    <message>
        <source>The history database file.</source>
        <translation>ইতিহাসের ডেটাবেস ফাইল।</translation>
    </message>
    <message>
        <source>Load this GGUF model at start.</source>
        <translation>শুরুতেই এই GGUF মডেলটি লোড করুন।</translation>
    </message>
</context>
</TS>
