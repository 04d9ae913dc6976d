// PlaceOffer: the place a sink gave a message a peer is writing into it.
// Kept so that the same frame, sent again whole on a resumed link after its
// payload was read in part, is offered the same place (MessageSink::placeFor):
// the receive it matched is no longer posted to match it again.
#pragma once

#include <mmpi/wire/frame.h>

namespace mmpi::detail {

struct PlaceOffer
{
    char *place = nullptr;
    quint64 sequence = 0; // the frame's number on its link (0: none to match)

    static PlaceOffer of(char *place, const FrameHeader &header) { return {place, header.sequence}; }
    // The place again if `header` is the frame it was given to, sent again.
    char *againFor(const FrameHeader &header) const
    {
        return header.kind == FrameKind::Data && sequence != 0 && header.sequence == sequence ? place : nullptr;
    }
};

} // namespace mmpi::detail
