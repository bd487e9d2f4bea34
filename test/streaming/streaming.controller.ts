import { Controller, Get, MessageEvent, Sse, StreamableFile } from '@nestjs/common';
import { Readable } from 'node:stream';
import { interval, map, take, type Observable } from 'rxjs';
import { RateLimit } from 'nestjs-holdup';

@Controller('s')
export class StreamingController {
  /** Server-sent events: the headers must be on the response before its first byte. */
  @Sse('events')
  @RateLimit({ rate: 1, burst: 2 })
  events(): Observable<MessageEvent> {
    return interval(1).pipe(
      take(3),
      map((i) => ({ data: { i } })),
    );
  }

  /** A streamed body. */
  @Get('file')
  @RateLimit({ rate: 1, burst: 2 })
  file(): StreamableFile {
    return new StreamableFile(Readable.from(['chunk-1 ', 'chunk-2 ', 'chunk-3']));
  }

  /** The same, with an adaptive limit: the interceptor writes the headers, around a stream. */
  @Get('adaptive-file')
  @RateLimit({ rate: 1, burst: 2, adaptive: { min: 0.5, max: 2 } })
  adaptiveFile(): StreamableFile {
    return new StreamableFile(Readable.from(['a ', 'b']));
  }
}
