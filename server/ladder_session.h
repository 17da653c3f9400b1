// One ScoreLadder call (proto "LADDERS"): one reference against N renditions, every
// source decoded by the server, the reference once.
//
// Two threads, as for decoded ScoreStreams: the call's thread reads the header, then
// appends each upload's chunks to its spool; a scoring thread opens every decoder,
// starts engine LadderSources (renditions of another size scaled to the reference's),
// creates one FramePipeline per rendition (each rendition is scored as its own stream
// would be: its own scorers, its own pooled summary), sends LadderAccepted, then hands
// each reference frame with every rendition's frame of the same index to the
// renditions' pipelines. Answers (LadderFrame) come back on the pipelines' threads,
// interleaved across renditions, each rendition's in frame order; writes to the call
// are serialised. The call holds at most K frames in flight per rendition; each
// reference frame is shared by the renditions' frames and freed after the last of
// them is answered.
//
// Endings: a rendition whose frame count differs, whose decoder fails or whose frame
// fails to score ends on its own (RenditionEnd with the error; the others go on). The
// reference's errors, a cancelled call and protocol errors end the call with the
// error after the answers before it.
#ifndef EXACTQ_SERVER_LADDER_SESSION_H_
#define EXACTQ_SERVER_LADDER_SESSION_H_

#include "exactq/v1/exactq.grpc.pb.h"
#include "server/request_stream.h"
#include "server/server_config.h"
#include "server/server_metrics.h"
#include "server/stream_session.h"

namespace exactq::server {

grpc::Status RunLadderSession(const ServerConfig& config, ServerMetrics* metrics, const SessionResources& resources,
                              grpc::ServerContext* context, LadderRequestStream* stream);

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_LADDER_SESSION_H_
