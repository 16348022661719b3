#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  size_t total=(size_t)atol(argv[1])<<20, chunk=(size_t)atol(argv[2])<<10; char *buf; posix_memalign((void**)&buf,1<<21,chunk); memset(buf,1,chunk);
  double best=1e9, sum=0; int reps=20;
  for(int rep=0;rep<reps;rep++){
    unlink("/dev/shm/pwt"); int fd=open("/dev/shm/pwt",O_CREAT|O_RDWR,0600);
    double t0=now(); for(size_t o=0;o<total;o+=chunk) pwrite(fd,buf,chunk,o); double t=now()-t0; close(fd);
    if(t<best)best=t; sum+=t;
  }
  printf("file %zu MiB in %zu KiB pwrites: best %.0f MB/s, mean %.0f MB/s\n",total>>20,chunk>>10,total/best/1e6,total/(sum/reps)/1e6);
  unlink("/dev/shm/pwt");
}
