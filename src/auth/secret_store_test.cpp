#include "auth/secret_store.h"

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

#include "auth/key_registry.h"
#include "support/sqlite_store.h"

namespace cairn::auth {
namespace {

constexpr char kValue[] = "s3cr3t-value-do-not-leak";

class SecretStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(store_.Open(clock_)); }
  static SecretBox Box(char fill) { return std::move(SecretBox::FromKey(std::string(32, fill))).value(); }
  // Everything stored for the secrets, records and history, as text.
  std::string StoredText() {
    model::BreadcrumbQuery query;
    query.schema_name = std::string(kSecretSchema);
    query.include_context = true;
    auto page = store_->List(kSystemOwner, query);
    EXPECT_TRUE(page.ok());
    std::string text;
    for (const auto& crumb : page->items) {
      text += boost::json::serialize(crumb.context);
      auto history = store_->History(kSystemOwner, crumb.id);
      if (history.ok()) {
        for (const auto& version : *history) text += boost::json::serialize(version.context);
      }
    }
    return text;
  }
  ManualClock clock_{1'800'000'000'000'000};
  test_support::TempSqliteStore store_{"cairn-secret-test"};
};

TEST(SecretBoxTest, SealsWithARandomNonceAndRefusesAnotherKeyOrAlteredBytes) {
  SecretBox box = std::move(SecretBox::FromKey(std::string(32, 'k'))).value();
  auto a = box.Seal(kValue);
  auto b = box.Seal(kValue);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  EXPECT_EQ(a->find(kValue), std::string::npos);
  EXPECT_EQ(*box.Open(*a), kValue);
  SecretBox other = std::move(SecretBox::FromKey(std::string(32, 'o'))).value();
  EXPECT_EQ(other.Open(*a).status().code(), StatusCode::kInternal);
  std::string altered = *a;
  altered.back() ^= 1;
  EXPECT_FALSE(box.Open(altered).ok());
  EXPECT_FALSE(box.Open("short").ok());
  EXPECT_EQ(SecretBox::FromKey("too short").status().code(), StatusCode::kInvalidArgument);
}

TEST(SecretBoxTest, MasterKeysAre64HexCharacters) {
  auto hex = NewMasterKeyHex();
  ASSERT_TRUE(hex.ok());
  EXPECT_EQ(hex->size(), 64u);
  auto key = ParseMasterKey(*hex + "\n", "file");
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->size(), 32u);
  EXPECT_EQ(ParseMasterKey("abcd", "CAIRN_MASTER_KEY").status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ParseMasterKey(std::string(64, 'z'), "CAIRN_MASTER_KEY").status().message().find("CAIRN_MASTER_KEY"),
            std::string::npos);
}

TEST_F(SecretStoreTest, StoresOnlySealedValuesPerTenantAndRotates) {
  SecretBox box = Box('m');
  SecretStore secrets(*store_, box);
  auto put = secrets.Put("acme", "API_TOKEN", kValue, "ann");
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_EQ(put->version, 1);
  EXPECT_EQ(*secrets.Resolve("acme", "API_TOKEN"), kValue);
  // Another tenant neither sees nor resolves it.
  EXPECT_EQ(secrets.Resolve("globex", "API_TOKEN").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(secrets.List("globex")->empty());
  ASSERT_EQ(secrets.List("acme")->size(), 1u);
  EXPECT_EQ(secrets.List("acme")->front().name, "API_TOKEN");

  auto rotated = secrets.Put("acme", "API_TOKEN", "the-new-value", "ann");
  ASSERT_TRUE(rotated.ok());
  EXPECT_EQ(rotated->version, 2);
  EXPECT_EQ(*secrets.Resolve("acme", "API_TOKEN"), "the-new-value");
  EXPECT_EQ(secrets.List("acme")->size(), 1u);

  std::string stored = StoredText();
  EXPECT_FALSE(stored.empty());
  EXPECT_EQ(stored.find(kValue), std::string::npos) << stored;
  EXPECT_EQ(stored.find("the-new-value"), std::string::npos) << stored;

  // A store reopened with another key cannot open it.
  SecretBox wrong = Box('w');
  SecretStore with_wrong_key(*store_, wrong);
  EXPECT_EQ(with_wrong_key.Resolve("acme", "API_TOKEN").status().code(), StatusCode::kInternal);

  ASSERT_TRUE(secrets.Delete("acme", "API_TOKEN", "ann").ok());
  EXPECT_EQ(secrets.Resolve("acme", "API_TOKEN").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(secrets.Delete("acme", "API_TOKEN", "ann").code(), StatusCode::kNotFound);
}

TEST_F(SecretStoreTest, BadNamesAndValuesAreRefusedNamingTheField) {
  SecretBox box = Box('m');
  SecretStore secrets(*store_, box);
  for (const std::string& name : {std::string(), std::string("a/b"), std::string(".."), std::string(129, 'a'),
                                  std::string("sp ace")}) {
    auto put = secrets.Put("acme", name, "v", "ann");
    EXPECT_EQ(put.status().code(), StatusCode::kValidation) << name;
  }
  EXPECT_EQ(secrets.Put("acme", "ok", "", "ann").status().code(), StatusCode::kValidation);
  EXPECT_EQ(secrets.Put("acme", "ok", std::string(kMaxSecretBytes + 1, 'v'), "ann").status().code(),
            StatusCode::kValidation);
  EXPECT_TRUE(secrets.List("acme")->empty());
}

}  // namespace
}  // namespace cairn::auth
