// A ScoreStream call whose two sides are decoded by the server (proto "SOURCES"):
// uploads spooled as their EncodedChunks arrive, or files under --source_root.
//
// Two threads: the call's thread reads messages and appends each upload's chunks to
// its spool (never blocking on decoding, so the client may send the two files in any
// order); a scoring thread opens both decoders (engine/decode), checks that the
// sources pair, creates the scorer from the decoded geometry, sends StreamAccepted and
// feeds decoded pairs into the same FramePipeline and FrameAnswerer as uploaded
// pictures, then the summary. Server paths are checked before anything else, so a
// refused path ends the call at once (PERMISSION_DENIED, NOT_FOUND). Decoder errors
// end the stream after the answers before the failing frame, with the decoder's code
// (INVALID_ARGUMENT, UNIMPLEMENTED, RESOURCE_EXHAUSTED) and message naming the side,
// the frame and the cause.
#ifndef EXACTQ_SERVER_DECODED_STREAM_SESSION_H_
#define EXACTQ_SERVER_DECODED_STREAM_SESSION_H_

#include "exactq/v1/exactq.grpc.pb.h"
#include "server/frame_answerer.h"
#include "server/request_stream.h"
#include "server/server_config.h"
#include "server/server_metrics.h"
#include "server/stream_session.h"

namespace exactq::server {

// True when the header names an upload or a server path on either side.
bool UsesDecodedSources(const v1::StreamHeader& header);

// Runs the call after its header; *counts receives the frames answered.
grpc::Status RunDecodedStreamSession(const ServerConfig& config, ServerMetrics* metrics,
                                     const SessionResources& resources, grpc::ServerContext* context,
                                     RequestStream* stream, const v1::StreamHeader& header, FrameCounts* counts);

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_DECODED_STREAM_SESSION_H_
