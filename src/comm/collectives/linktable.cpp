#include "linktable.h"

#include <mmpi/world/world.h>

#include <algorithm>
#include <cmath>

namespace mmpi::detail {

namespace {

LinkModel modelOf(const LinkMedium &medium)
{
    // A transport of one's own that names no rate: decide as for Wi-Fi
    // rather than divide by zero.
    const LinkMedium m = medium.bytesPerUs > 0 ? medium : LinkMedium::wifi();
    return {m.latencyUs, m.bytesPerUs, m.overheadUs};
}

double median(QList<double> values)
{
    std::sort(values.begin(), values.end());
    const qsizetype n = values.size();
    return n % 2 ? values.at(n / 2) : (values.at(n / 2 - 1) + values.at(n / 2)) / 2;
}

} // namespace

LinkTable::LinkTable(World *world)
    : m_world(world)
{
    m_clock.start();
}

double LinkTable::rounded(double measure)
{
    if (!(measure > 0))
        return 0.0;
    const double unit = std::pow(10.0, std::floor(std::log10(measure)) - 1);
    return std::round(measure / unit) * unit;
}

LinkModel LinkTable::mediumModel() const
{
    QMutexLocker lock(&m_mutex);
    return m_fixed ? *m_fixed : modelOf(m_world->expectedLink());
}

LinkModel LinkTable::model(const QList<int> &peers) const
{
    QMutexLocker lock(&m_mutex);
    if (m_fixed)
        return *m_fixed;
    const qint64 now = m_clock.elapsed();
    if (m_memo.atMs >= 0 && now - m_memo.atMs < MemoMs && m_memo.peers == peers)
        return m_memo.model;
    LinkModel model = modelOf(m_world->expectedLink());
    QList<double> latencies;
    QList<double> rates;
    const int me = m_world->rank();
    for (int peer : peers) {
        if (peer == me)
            continue;
        const auto quality = m_world->linkQuality(peer);
        if (!quality)
            continue;
        if (quality->roundTripSamples > 0 && quality->minRoundTrip.count() > 0)
            latencies.append(double(quality->minRoundTrip.count()) / 2.0);
        if (const double rate = quality->measuredRate(); rate > 0)
            rates.append(rate / 1e6);
    }
    if (!latencies.isEmpty())
        model.latencyUs = rounded(median(latencies));
    // The fastest link: all of a node's links share its radio, and a link
    // whose frames shared it with others measured only its share of it.
    if (!rates.isEmpty())
        model.bytesPerUs = rounded(*std::max_element(rates.begin(), rates.end()));
    m_memo = {peers, model, now};
    return model;
}

void LinkTable::setFixedModel(std::optional<LinkModel> model)
{
    QMutexLocker lock(&m_mutex);
    m_fixed = model;
    m_memo = {};
}

} // namespace mmpi::detail
