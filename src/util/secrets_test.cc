#include "util/secrets.h"

#include <gtest/gtest.h>

#include <string>

namespace arbor {
namespace {

// A canary with characters that every encoding treats specially: '/', '+', a quote, a
// backslash, a space and a newline.
constexpr std::string_view kCanary = "sk-CANARY/9x+Q\"uo\\te d\nline-7f3a";
constexpr std::string_view kRedacted = "[redacted:ARBOR_TEST_KEY]";

Scrubber CanaryScrubber() {
  Scrubber s;
  s.Add("ARBOR_TEST_KEY", std::string(kCanary));
  return s;
}

std::string Base64Std(std::string_view bytes) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned bits = 0;
  int count = 0;
  for (char c : bytes) {
    bits = bits << 8 | static_cast<unsigned char>(c);
    count += 8;
    while (count >= 6) {
      count -= 6;
      out += kAlphabet[(bits >> count) & 63];
    }
  }
  if (count > 0) out += kAlphabet[(bits << (6 - count)) & 63];
  while (out.size() % 4 != 0) out += '=';
  return out;
}

TEST(ScrubberTest, RedactsThePlainValueInALogLine) {
  Scrubber s = CanaryScrubber();
  std::string line = "curl -H 'Authorization: Bearer " + std::string(kCanary) + "' failed\n";
  std::string out = s.Scrub(line);
  EXPECT_EQ(out, "curl -H 'Authorization: Bearer " + std::string(kRedacted) + "' failed\n");
  EXPECT_TRUE(s.Contains(line));
  EXPECT_FALSE(s.Contains(out));
}

TEST(ScrubberTest, RedactsEveryPrecomputedForm) {
  Scrubber s = CanaryScrubber();
  for (const std::string& form : Scrubber::Forms(kCanary)) {
    std::string text = "before " + form + " after";
    EXPECT_EQ(s.Scrub(text), "before " + std::string(kRedacted) + " after") << form;
  }
}

TEST(ScrubberTest, FormsCoverTheDocumentedEncodings) {
  std::vector<std::string> forms = Scrubber::Forms("a/b c\"d\\e\nf");
  auto has = [&](std::string_view f) {
    return std::find(forms.begin(), forms.end(), f) != forms.end();
  };
  EXPECT_TRUE(has("a/b c\"d\\e\nf"));
  EXPECT_TRUE(has("612f62206322645c650a66"));         // hex
  EXPECT_TRUE(has("612F62206322645C650A66"));         // HEX
  EXPECT_TRUE(has("a%2Fb%20c%22d%5Ce%0Af"));          // percent, upper
  EXPECT_TRUE(has("a%2fb%20c%22d%5ce%0af"));          // percent, lower
  EXPECT_TRUE(has("a/b%20c%22d%5Ce%0Af"));            // Python quote()
  EXPECT_TRUE(has("a%2Fb+c%22d%5Ce%0Af"));            // form encoding
  EXPECT_TRUE(has("a/b c\\\"d\\\\e\\nf"));            // JSON
  EXPECT_TRUE(has("a\\/b c\\\"d\\\\e\\nf"));          // JSON, \/
  EXPECT_TRUE(has("a/b c\\\\\\\"d\\\\\\\\e\\\\nf"));  // JSON twice
  EXPECT_TRUE(has("a/b c\"d\\e\\nf"));                // escaped newline
  EXPECT_TRUE(has(Base64Std("a/b c\"d\\e\nf")));      // base64, padded
  EXPECT_TRUE(has("YS9iIGMiZFxlCmY"));                // base64, unpadded
  std::vector<std::string> ctl =
      Scrubber::Forms(std::string("abc\x01"
                                  "def"));
  EXPECT_NE(std::find(ctl.begin(), ctl.end(), "abc\\u0001def"), ctl.end());
}

TEST(ScrubberTest, RedactsBase64AtEveryOffsetInsideALargerBlob) {
  Scrubber s = CanaryScrubber();
  for (size_t prefix = 0; prefix < 6; ++prefix) {
    for (size_t suffix = 0; suffix < 4; ++suffix) {
      std::string blob = std::string(prefix, 'P') + std::string(kCanary) + std::string(suffix, 'S');
      std::string encoded = Base64Std(blob);
      std::string text = "Authorization: Basic " + encoded + "\n";
      ASSERT_TRUE(s.Contains(text)) << "prefix " << prefix << " suffix " << suffix;
      std::string out = s.Scrub(text);
      EXPECT_NE(out.find(kRedacted), std::string::npos);
      EXPECT_FALSE(s.Contains(out));
      // Only the neighbours' characters and the two edge characters they share remain.
      size_t neighbours = (8 * (prefix + suffix) + 5) / 6 + 2 + 2;  // + edges + padding
      EXPECT_LE(out.size() - kRedacted.size(), text.size() - encoded.size() + neighbours);
    }
  }
}

TEST(ScrubberTest, RedactsUrlSafeBase64Blobs) {
  Scrubber s;
  s.Add("TOKEN", "\xfb\xff\xbf-token-\xfe\xff");
  std::string url = "https://x/?t=" + Base64Std("xy\xfb\xff\xbf-token-\xfe\xffz");
  for (char& c : url) c = c == '+' ? '-' : c == '/' ? '_' : c;
  EXPECT_NE(s.Scrub(url).find("[redacted:TOKEN]"), std::string::npos) << url;
}

TEST(ScrubberTest, RedactsTheValueInsideJson) {
  Scrubber s = CanaryScrubber();
  std::string json =
      R"({"event":"request","headers":{"x-api-key":"sk-CANARY/9x+Q\"uo\\te d\nline-7f3a"}})";
  EXPECT_EQ(s.Scrub(json),
            R"({"event":"request","headers":{"x-api-key":"[redacted:ARBOR_TEST_KEY]"}})");
}

TEST(ScrubberTest, RedactsHexAndUrlEncodedValues) {
  Scrubber s;
  s.Add("K", "key/with+specials=");
  EXPECT_EQ(s.Scrub("dump 6b65792f776974682b7370656369616c733d end"), "dump [redacted:K] end");
  EXPECT_EQ(s.Scrub("dump 6B65792F776974682B7370656369616C733D end"), "dump [redacted:K] end");
  EXPECT_EQ(s.Scrub("GET /?k=key%2Fwith%2Bspecials%3D&x=1"), "GET /?k=[redacted:K]&x=1");
  EXPECT_EQ(s.Scrub("GET /?k=key%2fwith%2bspecials%3d&x=1"), "GET /?k=[redacted:K]&x=1");
}

TEST(ScrubberTest, OverlappingOccurrencesOfSeveralSecretsBecomeOneRedaction) {
  Scrubber s;
  s.Add("A", "abcdefgh");
  s.Add("B", "efghijkl");
  EXPECT_EQ(s.Scrub("x abcdefghijkl y"), "x [redacted:A] y");
  EXPECT_EQ(s.Scrub("abcdefghabcdefgh"), "[redacted:A]");
}

TEST(ScrubberTest, IgnoresShortValues) {
  Scrubber s;
  s.Add("SHORT", "12345");
  s.Add("EMPTY", "");
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.Scrub("ids 12345 and 123456"), "ids 12345 and 123456");
  s.Add("LONG", "123456");
  EXPECT_FALSE(s.empty());
  EXPECT_EQ(s.Scrub("ids 12345 and 123456"), "ids 12345 and [redacted:LONG]");
}

TEST(ScrubberTest, LeavesUnrelatedTextAlone) {
  Scrubber s = CanaryScrubber();
  s.Add("OTHER", "hunter2-password");
  std::string text =
      "[build] g++ -O3 -march=native -c gemm.cc\nmetric: 123.45 tok/s\n"
      "{\"p\":0.01,\"ci\":[1.02,1.1]} sk-CANARY line-7f3a aHVudGVy hunter2 password\n";
  EXPECT_FALSE(s.Contains(text));
  EXPECT_EQ(s.Scrub(text), text);
  EXPECT_EQ(Scrubber().Scrub(text), text);
}

// 8 MiB in one piece, as a flooding command's capped log can be (speed is not asserted: the
// machine is shared; the scrubber is linear in the text).
TEST(ScrubberTest, ScrubsMegabytes) {
  Scrubber s = CanaryScrubber();
  s.Add("SECOND", "another-secret-value-0123456789");
  std::string text;
  while (text.size() < (8u << 20)) text += "step 42: loss=0.1234 lr=3e-4 tokens/s=12345.6\n";
  text.insert(text.size() / 2, kCanary);
  std::string out = s.Scrub(text);
  EXPECT_FALSE(s.Contains(out));
  EXPECT_EQ(out.size(), text.size() - kCanary.size() + kRedacted.size());
}

}  // namespace
}  // namespace arbor
