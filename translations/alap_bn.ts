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
    <name>CatalogDelegate</name>
    <message>
        <source>বাংলা</source>
        <translation>বাংলা</translation>
    </message>
    <message>
        <source>Handles Bengali</source>
        <translation>বাংলা বোঝে</translation>
    </message>
    <message>
        <source>%1 parameters · %2 · %3 · license %4 · languages: %5</source>
        <translation>%1 প্যারামিটার · %2 · %3 · লাইসেন্স %4 · ভাষা: %5</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>ডাউনলোড করুন</translation>
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
    <message>
        <source>Export</source>
        <translation>এক্সপোর্ট</translation>
    </message>
    <message>
        <source>Export this chat</source>
        <translation>এই চ্যাট এক্সপোর্ট করুন</translation>
    </message>
    <message>
        <source>Export as Markdown…</source>
        <translation>Markdown হিসেবে এক্সপোর্ট করুন…</translation>
    </message>
    <message>
        <source>Export as JSON…</source>
        <translation>JSON হিসেবে এক্সপোর্ট করুন…</translation>
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
    <message>
        <source>Answer in Bengali</source>
        <translation>বাংলায় উত্তর</translation>
    </message>
    <message>
        <source>Answer in Bengali in this chat</source>
        <translation>এই চ্যাটে বাংলায় উত্তর</translation>
    </message>
    <message>
        <source>Adds an instruction to this chat to answer in Bengali</source>
        <translation>এই চ্যাটে বাংলায় উত্তর দেওয়ার নির্দেশ যোগ করে</translation>
    </message>
    <message>
        <source>Your message waits for the quality check to finish and is answered right after it.</source>
        <translation>আপনার বার্তাটি মান যাচাই শেষ হওয়ার অপেক্ষায় আছে; যাচাই শেষ হলেই উত্তর দেওয়া হবে।</translation>
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
    <message>
        <source>Export as Markdown…</source>
        <translation>Markdown হিসেবে এক্সপোর্ট করুন…</translation>
    </message>
    <message>
        <source>Export as JSON…</source>
        <translation>JSON হিসেবে এক্সপোর্ট করুন…</translation>
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
    <message>
        <source>Import conversation…</source>
        <translation>চ্যাট ইমপোর্ট করুন…</translation>
    </message>
    <message>
        <source>Import a chat from a JSON file exported by Alap</source>
        <translation>আলাপ থেকে এক্সপোর্ট করা JSON ফাইল থেকে চ্যাট ইমপোর্ট করুন</translation>
    </message>
</context>
<context>
    <name>DownloadDelegate</name>
    <message>
        <source>unknown</source>
        <translation>অজানা</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 সেকেন্ড</translation>
    </message>
    <message>
        <source>%1 min</source>
        <translation>%1 মিনিট</translation>
    </message>
    <message>
        <source>%1 h %2 min</source>
        <translation>%1 ঘণ্টা %2 মিনিট</translation>
    </message>
    <message>
        <source>The file was not found on the server.</source>
        <translation>সার্ভারে ফাইলটি পাওয়া যায়নি।</translation>
    </message>
    <message>
        <source>This model is gated: add a Hugging Face access token in the Token tab.</source>
        <translation>এই মডেলটি সুরক্ষিত: টোকেন ট্যাবে একটি Hugging Face অ্যাক্সেস টোকেন যোগ করুন।</translation>
    </message>
    <message>
        <source>Access denied: accept the model&apos;s terms on its web page, or check the token.</source>
        <translation>অনুমতি মেলেনি: মডেলের ওয়েব পাতায় তার শর্তগুলো মেনে নিন, অথবা টোকেনটি যাচাই করুন।</translation>
    </message>
    <message>
        <source>No connection to the server: check the network.</source>
        <translation>সার্ভারের সঙ্গে সংযোগ নেই: নেটওয়ার্ক দেখুন।</translation>
    </message>
    <message>
        <source>The server stopped answering.</source>
        <translation>সার্ভার সাড়া দেওয়া বন্ধ করেছে।</translation>
    </message>
    <message>
        <source>The server had a problem; try again later.</source>
        <translation>সার্ভারে সমস্যা হয়েছে; পরে আবার চেষ্টা করুন।</translation>
    </message>
    <message>
        <source>The disk is full: free some space, then resume.</source>
        <translation>ডিস্ক ভরে গেছে: কিছু জায়গা খালি করে আবার শুরু করুন।</translation>
    </message>
    <message>
        <source>The file could not be written.</source>
        <translation>ফাইলটি লেখা যায়নি।</translation>
    </message>
    <message>
        <source>The download was damaged (checksum mismatch) and was deleted.</source>
        <translation>ডাউনলোডটি নষ্ট হয়েছিল (চেকসাম মেলেনি), তাই মুছে ফেলা হয়েছে।</translation>
    </message>
    <message>
        <source>This download is not allowed (bad address or file name).</source>
        <translation>এই ডাউনলোডের অনুমতি নেই (ভুল ঠিকানা বা ফাইলের নাম)।</translation>
    </message>
    <message>
        <source>Waiting</source>
        <translation>অপেক্ষায়</translation>
    </message>
    <message>
        <source>Downloading</source>
        <translation>ডাউনলোড হচ্ছে</translation>
    </message>
    <message>
        <source>Paused</source>
        <translation>থামানো আছে</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>সম্পন্ন</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>ব্যর্থ</translation>
    </message>
    <message>
        <source>✓ verified</source>
        <translation>✓ যাচাই করা</translation>
    </message>
    <message>
        <source>Download progress</source>
        <translation>ডাউনলোডের অগ্রগতি</translation>
    </message>
    <message>
        <source>%1 of %2 · %3/s · %4 left</source>
        <translation>%2-এর মধ্যে %1 · %3/সেকেন্ড · আর %4 বাকি</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>থামান</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>আবার শুরু করুন</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>বাতিল করুন</translation>
    </message>
    <message>
        <source>Remove from list</source>
        <translation>তালিকা থেকে সরান</translation>
    </message>
</context>
<context>
    <name>FitBadge</name>
    <message>
        <source>Fits this machine</source>
        <translation>এই কম্পিউটারে চলবে</translation>
    </message>
    <message>
        <source>Tight fit</source>
        <translation>টেনেটুনে চলবে</translation>
    </message>
    <message>
        <source>Too large for this machine</source>
        <translation>এই কম্পিউটারের জন্য খুব বড়</translation>
    </message>
    <message>
        <source>Memory need unknown</source>
        <translation>কত মেমরি লাগবে জানা নেই</translation>
    </message>
</context>
<context>
    <name>HfSearchPane</name>
    <message>
        <source>Search GGUF models on Hugging Face</source>
        <translation>Hugging Face-এ GGUF মডেল খুঁজুন</translation>
    </message>
    <message>
        <source>Search Hugging Face</source>
        <translation>Hugging Face-এ খুঁজুন</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>খুঁজুন</translation>
    </message>
    <message>
        <source>Server: %1</source>
        <translation>সার্ভার: %1</translation>
    </message>
    <message>
        <source>%1
%2 downloads · %3 likes</source>
        <translation>%1
%2 বার ডাউনলোড · %3টি লাইক</translation>
    </message>
    <message>
        <source>%1 · %2 · %3</source>
        <translation>%1 · %2 · %3</translation>
    </message>
    <message>
        <source>other</source>
        <translation>অন্যান্য</translation>
    </message>
    <message>
        <source>Alap cannot run this quantisation yet: choose another, such as Q4_K_M or IQ4_XS.</source>
        <translation>আলাপ এখনো এই কোয়ান্টাইজেশন চালাতে পারে না: অন্য একটি বেছে নিন, যেমন Q4_K_M বা IQ4_XS।</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>ডাউনলোড করুন</translation>
    </message>
</context>
<context>
    <name>HfTokenPane</name>
    <message>
        <source>Hugging Face server: %1 (set HF_ENDPOINT to use a mirror)</source>
        <translation>Hugging Face সার্ভার: %1 (মিরর ব্যবহার করতে HF_ENDPOINT ঠিক করুন)</translation>
    </message>
    <message>
        <source>An access token is set (from %1).</source>
        <translation>একটি অ্যাক্সেস টোকেন দেওয়া আছে (%1 থেকে)।</translation>
    </message>
    <message>
        <source>No access token: gated models cannot be downloaded.</source>
        <translation>কোনো অ্যাক্সেস টোকেন নেই: সুরক্ষিত মডেল ডাউনলোড করা যাবে না।</translation>
    </message>
    <message>
        <source>Access token (hf_…)</source>
        <translation>অ্যাক্সেস টোকেন (hf_…)</translation>
    </message>
    <message>
        <source>Hugging Face access token</source>
        <translation>Hugging Face অ্যাক্সেস টোকেন</translation>
    </message>
    <message>
        <source>Save token</source>
        <translation>টোকেন সংরক্ষণ করুন</translation>
    </message>
    <message>
        <source>Remove token</source>
        <translation>টোকেন সরান</translation>
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
    <name>InstalledModelDelegate</name>
    <message>
        <source>%1 · %2 billion parameters · %3 · trained context %4 · %5</source>
        <translation>%1 · %2 বিলিয়ন প্যারামিটার · %3 · প্রশিক্ষণের কনটেক্সট %4 · %5</translation>
    </message>
    <message>
        <source>Cache at %1 tokens: f16 %2 · k8 %3 · k8v8 %4 · needs about %5</source>
        <translation>%1 টোকেনে ক্যাশ: f16 %2 · k8 %3 · k8v8 %4 · মোটামুটি %5 লাগবে</translation>
    </message>
    <message>
        <source>Cannot run: %1</source>
        <translation>চালানো যাবে না: %1</translation>
    </message>
    <message>
        <source>Loaded</source>
        <translation>লোড করা আছে</translation>
    </message>
    <message>
        <source>Load</source>
        <translation>লোড করুন</translation>
    </message>
    <message>
        <source>Show in folder</source>
        <translation>ফোল্ডারে দেখান</translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation>মুছুন…</translation>
    </message>
</context>
<context>
    <name>InstalledPane</name>
    <message>
        <source>Choose the models folder</source>
        <translation>মডেলের ফোল্ডার বেছে নিন</translation>
    </message>
    <message>
        <source>Delete model</source>
        <translation>মডেল মুছুন</translation>
    </message>
    <message>
        <source>Delete %1 from the disk?</source>
        <translation>ডিস্ক থেকে %1 মুছে ফেলবেন?</translation>
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
        <source>No models in %1 yet: download one from the Catalog.</source>
        <translation>%1-এ এখনো কোনো মডেল নেই: তালিকা থেকে একটি ডাউনলোড করুন।</translation>
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
        <source>No models folder is chosen yet: choose one above, or download a model from the Catalog.</source>
        <translation>এখনো কোনো মডেল ফোল্ডার বেছে নেওয়া হয়নি: ওপরে একটি বেছে নিন, অথবা তালিকা থেকে একটি মডেল ডাউনলোড করুন।</translation>
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
    <message>
        <source>Export the chat as JSON</source>
        <translation>চ্যাটটি JSON হিসেবে এক্সপোর্ট করুন</translation>
    </message>
    <message>
        <source>Export the chat as Markdown</source>
        <translation>চ্যাটটি Markdown হিসেবে এক্সপোর্ট করুন</translation>
    </message>
    <message>
        <source>JSON files (*.json)</source>
        <translation>JSON ফাইল (*.json)</translation>
    </message>
    <message>
        <source>Markdown files (*.md)</source>
        <translation>Markdown ফাইল (*.md)</translation>
    </message>
    <message>
        <source>Import a chat</source>
        <translation>চ্যাট ইমপোর্ট করুন</translation>
    </message>
    <message>
        <source>Chats exported by Alap (*.json)</source>
        <translation>আলাপ থেকে এক্সপোর্ট করা চ্যাট (*.json)</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>সব ফাইল (*)</translation>
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
    <message>
        <source>Free GPU memory</source>
        <translation>খালি GPU মেমরি</translation>
    </message>
    <message>
        <source>GPU %1 · %2 of %3 layers</source>
        <extracomment>where the model runs: GPU name, layers on the GPU, all layers</extracomment>
        <translation>GPU %1 · %3টির মধ্যে %2টি লেয়ার</translation>
    </message>
    <message>
        <source>CPU · %1 threads · %2</source>
        <extracomment>where the model runs: on the processor, with this many threads, and the processor&apos;s vector instructions the engine uses (%2 = &quot;AVX2&quot;, &quot;AVX-512 VNNI + AMX&quot;, ...: names, not translated)</extracomment>
        <translation>CPU · %1টি থ্রেড · %2</translation>
    </message>
    <message>
        <source>CPU · %1 threads</source>
        <extracomment>where the model runs: on the processor, with this many threads</extracomment>
        <translation>CPU · %1টি থ্রেড</translation>
    </message>
    <message>
        <source>This build of Alap has no GPU support: it runs on the CPU.</source>
        <translation>আলাপের এই বিল্ডে GPU সমর্থন নেই: এটি CPU-তে চলছে।</translation>
    </message>
    <message>
        <source>The GPU library could not be loaded (AMD Radeon RX 7000 cards need ROCm 6): running on the CPU.</source>
        <translation>GPU লাইব্রেরি লোড করা যায়নি (AMD Radeon RX 7000 কার্ডে ROCm 6 লাগে): CPU-তে চলছে।</translation>
    </message>
    <message>
        <source>The GPU library belongs to another version of Alap (reinstall Alap to use the GPU): running on the CPU.</source>
        <translation>GPU লাইব্রেরিটি আলাপের অন্য এক সংস্করণের (GPU ব্যবহার করতে আলাপ আবার ইনস্টল করুন): CPU-তে চলছে।</translation>
    </message>
    <message>
        <source>No usable GPU was found: running on the CPU.</source>
        <translation>ব্যবহারযোগ্য কোনো GPU পাওয়া যায়নি: CPU-তে চলছে।</translation>
    </message>
    <message>
        <source>This model cannot run on the GPU: running on the CPU.</source>
        <translation>এই মডেল GPU-তে চলতে পারে না: CPU-তে চলছে।</translation>
    </message>
    <message>
        <source>The GPU has too little free memory for this model and context: running on the CPU.</source>
        <translation>এই মডেল আর কনটেক্সটের জন্য GPU-তে যথেষ্ট খালি মেমরি নেই: CPU-তে চলছে।</translation>
    </message>
    <message>
        <source>%1 was not found: long prompts run on Alap&apos;s own GPU kernels, more slowly. Installing %1 (with the CUDA toolkit or ROCm) makes them faster.</source>
        <extracomment>%1 = cuBLAS or rocBLAS</extracomment>
        <translation>%1 পাওয়া যায়নি: লম্বা প্রম্পট আলাপের নিজস্ব GPU কার্নেলে, ধীরে চলছে। %1 ইনস্টল করলে (CUDA টুলকিট বা ROCm-এর সাথে) এগুলো দ্রুত হবে।</translation>
    </message>
    <message>
        <source>%1 failed Alap&apos;s check on this GPU: long prompts run on Alap&apos;s own GPU kernels, more slowly.</source>
        <extracomment>%1 = cuBLAS or rocBLAS</extracomment>
        <translation>এই GPU-তে %1 আলাপের যাচাইয়ে উতরায়নি: লম্বা প্রম্পট আলাপের নিজস্ব GPU কার্নেলে, ধীরে চলছে।</translation>
    </message>
    <message>
        <source>No GPU memory is left for %1&apos;s workspace beside this model: long prompts run on Alap&apos;s own GPU kernels, more slowly.</source>
        <extracomment>%1 = cuBLAS or rocBLAS</extracomment>
        <translation>এই মডেলের পাশে %1-এর কাজের জায়গার জন্য GPU মেমরি বাকি নেই: লম্বা প্রম্পট আলাপের নিজস্ব GPU কার্নেলে, ধীরে চলছে।</translation>
    </message>
    <message>
        <source>This GPU library has no vendor BLAS: long prompts run on Alap&apos;s own GPU kernels, more slowly.</source>
        <translation>এই GPU লাইব্রেরিতে নির্মাতার BLAS নেই: লম্বা প্রম্পট আলাপের নিজস্ব GPU কার্নেলে, ধীরে চলছে।</translation>
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
    <message>
        <source>Runs on: %1</source>
        <translation>চলছে: %1</translation>
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
    <name>ModelsPage</name>
    <message>
        <source>Models</source>
        <translation>মডেল</translation>
    </message>
    <message>
        <source>Installed</source>
        <translation>ইনস্টল করা</translation>
    </message>
    <message>
        <source>Catalog</source>
        <translation>তালিকা</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>খোঁজ</translation>
    </message>
    <message>
        <source>Downloads (%1)</source>
        <translation>ডাউনলোড (%1)</translation>
    </message>
    <message>
        <source>Token</source>
        <translation>টোকেন</translation>
    </message>
    <message>
        <source>Backend</source>
        <translation>ব্যাকএন্ড</translation>
    </message>
    <message>
        <source>No downloads.</source>
        <translation>কোনো ডাউনলোড নেই।</translation>
    </message>
    <message>
        <source>This computer: %1 of memory, %2 free now · estimates for a context of %3 tokens in %4 mode</source>
        <translation>এই কম্পিউটার: মোট মেমরি %1, এখন খালি %2 · হিসাবগুলো %3 টোকেনের কনটেক্সট আর %4 মোড ধরে</translation>
    </message>
</context>
<context>
    <name>QPlatformTheme</name>
    <message>
        <source>OK</source>
        <translation>ঠিক আছে</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>বাতিল করুন</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>বন্ধ করুন</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>খুলুন</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>সংরক্ষণ করুন</translation>
    </message>
    <message>
        <source>Apply</source>
        <translation>প্রয়োগ করুন</translation>
    </message>
    <message>
        <source>Reset</source>
        <translation>আগের মতো করুন</translation>
    </message>
    <message>
        <source>Help</source>
        <translation>সাহায্য</translation>
    </message>
    <message>
        <source>Discard</source>
        <translation>বাদ দিন</translation>
    </message>
    <message>
        <source>&amp;Yes</source>
        <translation>হ্যাঁ</translation>
    </message>
    <message>
        <source>&amp;No</source>
        <translation>না</translation>
    </message>
</context>
<context>
    <name>QualityCheckSection</name>
    <message>
        <source>Quality of the packed cache</source>
        <translation>প্যাক করা ক্যাশের মান</translation>
    </message>
    <message>
        <source>Check quality on this model</source>
        <translation>এই মডেলে মান যাচাই করুন</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>বাতিল করুন</translation>
    </message>
    <message>
        <source>Cancel the quality check</source>
        <translation>মান যাচাই বাতিল করুন</translation>
    </message>
    <message>
        <source>Use recommended mode</source>
        <translation>সুপারিশ করা মোড ব্যবহার করুন</translation>
    </message>
    <message>
        <source>Use the recommended cache mode and reload the model</source>
        <translation>সুপারিশ করা ক্যাশ মোড ব্যবহার করুন এবং মডেলটি আবার লোড করুন</translation>
    </message>
    <message>
        <source>Saves the recommended cache mode in the settings and reloads the model with it</source>
        <translation>সুপারিশ করা ক্যাশ মোড সেটিংসে রাখে এবং সেই মোডে মডেলটি আবার লোড করে</translation>
    </message>
</context>
<context>
    <name>RemoteBackendPane</name>
    <message>
        <source>Run models on this computer</source>
        <translation>এই কম্পিউটারেই মডেল চালান</translation>
    </message>
    <message>
        <source>Use a remote server (OpenAI-compatible)</source>
        <translation>দূরের একটি সার্ভার ব্যবহার করুন (OpenAI-সামঞ্জস্যপূর্ণ)</translation>
    </message>
    <message>
        <source>Server address</source>
        <translation>সার্ভারের ঠিকানা</translation>
    </message>
    <message>
        <source>Model name</source>
        <translation>মডেলের নাম</translation>
    </message>
    <message>
        <source>empty: the server&apos;s first model</source>
        <translation>ফাঁকা রাখলে: সার্ভারের প্রথম মডেল</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API কী</translation>
    </message>
    <message>
        <source>saved (type to replace)</source>
        <translation>সংরক্ষিত আছে (বদলাতে নতুনটি লিখুন)</translation>
    </message>
    <message>
        <source>optional</source>
        <translation>ঐচ্ছিক</translation>
    </message>
    <message>
        <source>Save key</source>
        <translation>কী সংরক্ষণ করুন</translation>
    </message>
    <message>
        <source>Remove key</source>
        <translation>কী সরান</translation>
    </message>
    <message>
        <source>Connect</source>
        <translation>সংযোগ করুন</translation>
    </message>
    <message>
        <source>Connected: %1</source>
        <translation>সংযুক্ত: %1</translation>
    </message>
</context>
<context>
    <name>RemoteMemoryNote</name>
    <message>
        <source>The memory is on the remote server: this computer keeps no model and no cache.</source>
        <translation>মেমরি দূরের সার্ভারে: এই কম্পিউটারে কোনো মডেল বা ক্যাশ রাখা হয় না।</translation>
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
        <source>Threads (0: one per physical core)</source>
        <translation>থ্রেড (০: প্রতি ফিজিক্যাল কোরে একটি)</translation>
    </message>
    <message>
        <source>GPU layers</source>
        <translation>GPU লেয়ার</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>ভাষা</translation>
    </message>
    <message>
        <source>Interface language</source>
        <translation>ইন্টারফেসের ভাষা</translation>
    </message>
    <message>
        <source>Answer in Bengali in new chats</source>
        <translation>নতুন চ্যাটে বাংলায় উত্তর</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>বন্ধ করুন</translation>
    </message>
    <message>
        <source>Auto</source>
        <translation>স্বয়ংক্রিয়</translation>
    </message>
    <message>
        <source>CPU only</source>
        <translation>শুধু CPU</translation>
    </message>
    <message>
        <source>A number of layers</source>
        <translation>নির্দিষ্ট সংখ্যক লেয়ার</translation>
    </message>
    <message>
        <source>Number of layers on the GPU</source>
        <translation>GPU-তে লেয়ারের সংখ্যা</translation>
    </message>
    <message>
        <source>Auto puts as many layers on the GPU as fit in its memory; without a usable GPU the model runs on the CPU.</source>
        <translation>স্বয়ংক্রিয়: GPU-র মেমরিতে যতগুলো লেয়ার ধরে ততগুলো GPU-তে রাখা হয়; ব্যবহারযোগ্য GPU না থাকলে মডেলটি CPU-তে চলে।</translation>
    </message>
    <message>
        <source>The model runs on the CPU only.</source>
        <translation>মডেলটি শুধু CPU-তে চলে।</translation>
    </message>
    <message>
        <source>The first layers go to the GPU, the rest run on the CPU.</source>
        <translation>প্রথম দিকের লেয়ারগুলো GPU-তে যায়, বাকিগুলো CPU-তে চলে।</translation>
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
    <name>alap::app::AppSettings</name>
    <message>
        <source>Automatic (k8, or f16 where a model needs it)</source>
        <extracomment>the cache mode setting&apos;s default: the engine picks k8 (int8 keys), or f16 for a model whose key size cannot be packed</extracomment>
        <translation>স্বয়ংক্রিয় (k8, মডেলের প্রয়োজন হলে f16)</translation>
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
    <message>
        <source>There is no chat to export yet.</source>
        <translation>এক্সপোর্ট করার মতো কোনো চ্যাট এখনও নেই।</translation>
    </message>
    <message>
        <source>Saved the chat to %1</source>
        <translation>চ্যাটটি %1-এ রাখা হয়েছে</translation>
    </message>
    <message>
        <source>Could not write %1: %2</source>
        <translation>%1 লেখা যায়নি: %2</translation>
    </message>
    <message>
        <source>Could not export the chat: %1</source>
        <translation>চ্যাটটি এক্সপোর্ট করা যায়নি: %1</translation>
    </message>
    <message>
        <source>The history is read-only, so nothing can be imported into it.</source>
        <translation>ইতিহাস শুধু পড়া যায়, তাই এতে কিছু ইমপোর্ট করা যাবে না।</translation>
    </message>
    <message>
        <source>Imported “%1”</source>
        <translation>“%1” ইমপোর্ট করা হয়েছে</translation>
    </message>
    <message>
        <source>Could not read %1: %2</source>
        <translation>%1 পড়া যায়নি: %2</translation>
    </message>
    <message>
        <source>%1 is too large to be a chat exported by Alap. Nothing was imported.</source>
        <translation>%1 আলাপ থেকে এক্সপোর্ট করা চ্যাট হওয়ার পক্ষে অনেক বড়। কিছুই ইমপোর্ট করা হয়নি।</translation>
    </message>
    <message>
        <source>%1 is not a chat exported by Alap as JSON. Nothing was imported.</source>
        <translation>%1 আলাপ থেকে JSON হিসেবে এক্সপোর্ট করা কোনো চ্যাট নয়। কিছুই ইমপোর্ট করা হয়নি।</translation>
    </message>
    <message>
        <source>%1 was exported by a newer version of Alap. Update Alap to import it; nothing was imported.</source>
        <translation>%1 আলাপের নতুনতর সংস্করণ থেকে এক্সপোর্ট করা। এটি ইমপোর্ট করতে আলাপ আপডেট করুন; কিছুই ইমপোর্ট করা হয়নি।</translation>
    </message>
    <message>
        <source>%1 is damaged, so nothing was imported (%2).</source>
        <translation>%1 ক্ষতিগ্রস্ত, তাই কিছুই ইমপোর্ট করা হয়নি (%2)।</translation>
    </message>
    <message>
        <source>Could not import %1: %2</source>
        <translation>%1 ইমপোর্ট করা যায়নি: %2</translation>
    </message>
    <message>
        <source>Waiting for the quality check… Esc cancels the answer.</source>
        <translation>মান যাচাইয়ের অপেক্ষায়… Esc চাপলে উত্তর বাতিল হবে।</translation>
    </message>
    <message>
        <source>This model&apos;s chat template could not be used, so Alap writes the chat in the generic ChatML form; its answers may be worse.</source>
        <translation>এই মডেলের চ্যাট টেমপ্লেট ব্যবহার করা যায়নি, তাই আলাপ চ্যাটটি সাধারণ ChatML রূপে লিখছে; উত্তর কিছুটা খারাপ হতে পারে।</translation>
    </message>
    <message>
        <source>The GPU layers you asked for could not be used: the model runs on the CPU. The memory panel says why.</source>
        <translation>আপনার চাওয়া GPU লেয়ারগুলো ব্যবহার করা যায়নি: মডেলটি CPU-তে চলছে। কারণ মেমরি প্যানেলে লেখা আছে।</translation>
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
    <message>
        <source>Copying the weights to the GPU</source>
        <translation>ওয়েটগুলো GPU-তে কপি হচ্ছে</translation>
    </message>
    <message>
        <source>Preparing the weights for the CPU</source>
        <translation>CPU-র জন্য ওয়েটগুলো সাজানো হচ্ছে</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>প্রস্তুত</translation>
    </message>
</context>
<context>
    <name>alap::app::ModelsController</name>
    <message>
        <source>Could not start the download: %1</source>
        <translation>ডাউনলোড শুরু করা যায়নি: %1</translation>
    </message>
    <message>
        <source>Could not delete the model: %1</source>
        <translation>মডেলটি মোছা যায়নি: %1</translation>
    </message>
    <message>
        <source>%1 is no longer in the repository %2.</source>
        <translation>%1 আর %2 রিপোজিটরিতে নেই।</translation>
    </message>
    <message>
        <source>Could not list the files: %1</source>
        <translation>ফাইলের তালিকা আনা যায়নি: %1</translation>
    </message>
    <message>
        <source>Alap cannot run %1 files yet; nothing was downloaded.</source>
        <translation>আলাপ এখনো %1 ফাইল চালাতে পারে না; কিছুই ডাউনলোড করা হয়নি।</translation>
    </message>
</context>
<context>
    <name>alap::app::QualityCheck</name>
    <message>
        <source>The quality check failed: %1</source>
        <translation>মান যাচাই করা যায়নি: %1</translation>
    </message>
    <message>
        <source>Load a model on this computer to check what the packed cache costs on it.</source>
        <translation>প্যাক করা ক্যাশে মডেলের কতটা ক্ষতি হয় তা যাচাই করতে এই কম্পিউটারে একটি মডেল লোড করুন।</translation>
    </message>
    <message>
        <source>A remote model cannot be checked: its cache is on the server, not on this computer.</source>
        <translation>দূরের মডেল যাচাই করা যায় না: তার ক্যাশ সার্ভারে থাকে, এই কম্পিউটারে নয়।</translation>
    </message>
    <message>
        <source>Wait for the answer to finish.</source>
        <translation>উত্তর শেষ হওয়া পর্যন্ত অপেক্ষা করুন।</translation>
    </message>
    <message>
        <source>Compares the f16 cache with k8 and k8v8 on a short sample text (about a minute on a large model).</source>
        <translation>একটি ছোট নমুনা লেখায় f16 ক্যাশের সঙ্গে k8 ও k8v8 মিলিয়ে দেখে (বড় মডেলে প্রায় এক মিনিট লাগে)।</translation>
    </message>
    <message>
        <source>Checking… %1</source>
        <translation>যাচাই হচ্ছে… %1</translation>
    </message>
    <message>
        <source>no measurable loss</source>
        <translation>মাপার মতো কোনো ক্ষতি নেই</translation>
    </message>
    <message>
        <source>a small loss</source>
        <translation>সামান্য ক্ষতি</translation>
    </message>
    <message>
        <source>a noticeable loss</source>
        <translation>লক্ষণীয় ক্ষতি</translation>
    </message>
    <message>
        <source>%1: perplexity %2, KL %3 — %4</source>
        <translation>%1: পারপ্লেক্সিটি %2, KL %3 — %4</translation>
    </message>
    <message>
        <source>Recommended for this model: k8v8. Both K and V are packed, the smallest cache, with no measurable loss.</source>
        <translation>এই মডেলের জন্য সুপারিশ: k8v8। K ও V দুটোই প্যাক করা, সবচেয়ে ছোট ক্যাশ, মাপার মতো কোনো ক্ষতি ছাড়াই।</translation>
    </message>
    <message>
        <source>Recommended for this model: k8. Packing K costs nothing measurable; packing V as well would.</source>
        <translation>এই মডেলের জন্য সুপারিশ: k8। K প্যাক করলে মাপার মতো কোনো ক্ষতি হয় না; V-ও প্যাক করলে হয়।</translation>
    </message>
    <message>
        <source>Recommended for this model: f16. Packing the cache changes this model&apos;s answers measurably.</source>
        <translation>এই মডেলের জন্য সুপারিশ: f16। ক্যাশ প্যাক করলে এই মডেলের উত্তর মাপার মতো বদলে যায়।</translation>
    </message>
    <message>
        <source>The cache mode is now %1. The model is reloading with it…</source>
        <translation>ক্যাশ মোড এখন %1। এই মোডে মডেলটি আবার লোড হচ্ছে…</translation>
    </message>
    <message>
        <source>The model was reloaded with the %1 cache.</source>
        <translation>মডেলটি %1 ক্যাশ নিয়ে আবার লোড করা হয়েছে।</translation>
    </message>
    <message>
        <source>The cache mode is now %1; it applies to the next model load.</source>
        <translation>ক্যাশ মোড এখন %1; পরের বার মডেল লোড করার সময় এটি কাজে লাগবে।</translation>
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
