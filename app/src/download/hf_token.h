// The optional Hugging Face access token (for gated models), kept outside the database in a file
// only its owner may read: <GenericConfigLocation>/alap/hf_token, written with mode 0600.
// Reading is strict, the safer choice: a token file that group or others can read or write is
// refused (not used) with a message telling how to fix it (chmod 600), because a token that
// others could read may already be leaked and one they could write may not be ours.
// $HF_TOKEN, when set, takes precedence over the file (the Hugging Face convention).
#pragma once

#include <QString>

namespace alap::download {

QString defaultTokenPath();

struct TokenRead {
  QString token;  // empty when there is none (or on error)
  QString error;  // why a present file was refused
  QString source; // "HF_TOKEN", the file path, or empty
};

// The token from $HF_TOKEN, else from path (default: defaultTokenPath()).
TokenRead readToken(const QString& path = QString(), bool useEnvironment = true);

// Writes (or, for an empty token, deletes) the token file with mode 0600 through a temporary
// file and a rename. False with *error on failure.
bool writeToken(const QString& token, const QString& path = QString(), QString* error = nullptr);

}  // namespace alap::download
