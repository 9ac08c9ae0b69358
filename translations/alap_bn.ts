<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="bn_BD">
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
</context>
</TS>
