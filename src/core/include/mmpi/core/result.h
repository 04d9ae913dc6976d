// mmpi::Result<T>: a value or an mmpi::Error, the return type of every fallible
// call in the lower layers (g++ 12 has no std::expected). Result<void> carries
// only success or an error.
#pragma once

#include <mmpi/core/error.h>

#include <cassert>
#include <utility>
#include <variant>

namespace mmpi {

template<typename T>
class [[nodiscard]] Result
{
public:
    Result(const T &value) : m_data(std::in_place_index<0>, value) {}
    Result(T &&value) : m_data(std::in_place_index<0>, std::move(value)) {}
    Result(Error error) : m_data(std::in_place_index<1>, std::move(error)) {}

    bool hasValue() const { return m_data.index() == 0; }
    explicit operator bool() const { return hasValue(); }

    T &value() & { assert(hasValue()); return std::get<0>(m_data); }
    const T &value() const & { assert(hasValue()); return std::get<0>(m_data); }
    T &&value() && { assert(hasValue()); return std::get<0>(std::move(m_data)); }
    T &operator*() & { return value(); }
    const T &operator*() const & { return value(); }
    T *operator->() { return &value(); }
    const T *operator->() const { return &value(); }

    const Error &error() const { assert(!hasValue()); return std::get<1>(m_data); }

private:
    std::variant<T, Error> m_data;
};

template<>
class [[nodiscard]] Result<void>
{
public:
    Result() = default;
    Result(Error error) : m_error(std::move(error)) {}

    bool hasValue() const { return !m_error.isError(); }
    explicit operator bool() const { return hasValue(); }
    const Error &error() const { return m_error; }

private:
    Error m_error;
};

inline Result<void> success() { return {}; }

} // namespace mmpi
