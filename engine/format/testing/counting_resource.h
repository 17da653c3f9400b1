// A memory resource for tests that counts what it hands out (over new/delete), so a test
// can see where a Frame's bytes live and that they are given back.
#ifndef EXACTQ_ENGINE_FORMAT_TESTING_COUNTING_RESOURCE_H_
#define EXACTQ_ENGINE_FORMAT_TESTING_COUNTING_RESOURCE_H_

#include <cstddef>
#include <memory_resource>

namespace exactq {
namespace testing_memory {

class CountingResource : public std::pmr::memory_resource {
 public:
  int live = 0;         // blocks handed out and not yet given back
  int allocations = 0;  // blocks handed out in all

 private:
  void* do_allocate(size_t bytes, size_t alignment) override {
    ++live;
    ++allocations;
    return std::pmr::new_delete_resource()->allocate(bytes, alignment);
  }
  void do_deallocate(void* p, size_t bytes, size_t alignment) override {
    --live;
    std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }
};

}  // namespace testing_memory
}  // namespace exactq

#endif  // EXACTQ_ENGINE_FORMAT_TESTING_COUNTING_RESOURCE_H_
