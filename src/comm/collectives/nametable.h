// The names an algorithm choice has in options, logs and environment
// variables ("binomial", "recursive-doubling"), looked up both ways from one
// table per enum, so a name and its value cannot drift apart.
#pragma once

#include <QString>

#include <optional>

namespace mmpi::detail {

template<typename E>
struct Named
{
    E value;
    const char *name;
};

template<typename E, size_t N>
QString nameIn(const Named<E> (&table)[N], E value)
{
    for (const auto &entry : table)
        if (entry.value == value)
            return QString::fromLatin1(entry.name);
    return QStringLiteral("unknown");
}

template<typename E, size_t N>
std::optional<E> valueIn(const Named<E> (&table)[N], QStringView name)
{
    for (const auto &entry : table)
        if (name == QLatin1String(entry.name))
            return entry.value;
    return std::nullopt;
}

} // namespace mmpi::detail
