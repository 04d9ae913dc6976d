// BluezBonding: lets the links MMPI opens on Linux bond, so that a node back
// in range reconnects with the stored link key instead of pairing again.
// BlueZ pairs with "No Bonding", and both ends forget the key when the link
// drops, unless the adapter is pairable; a second "just works" pairing is
// then refused by default. Pairable for as long as this object lives.
#pragma once

#include <QString>

namespace mmpi {

class BluezBonding
{
public:
    enum class Outcome {
        AlreadyBondable, // pairable already (a desktop's agent, AlwaysPairable)
        MadeBondable,    // made pairable here; put back when this object goes
        Unavailable,     // no bluetoothd on the system bus, or no such adapter
        Refused,         // bluetoothd refused the change (D-Bus policy, polkit)
    };

    // `adapter`: the controller's address (48 bits).
    explicit BluezBonding(quint64 adapter);
    ~BluezBonding();
    BluezBonding(const BluezBonding &) = delete;
    BluezBonding &operator=(const BluezBonding &) = delete;

    Outcome outcome() const { return m_outcome; }
    // What happened, for the log: the adapter's object path or the D-Bus error.
    QString detail() const { return m_detail; }
    bool bondable() const { return m_outcome == Outcome::AlreadyBondable || m_outcome == Outcome::MadeBondable; }

private:
    QString m_path;
    Outcome m_outcome = Outcome::Unavailable;
    QString m_detail;
};

} // namespace mmpi
